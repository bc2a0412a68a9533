#pragma once
// Shared by the GPU tests: one evaluator for the whole process (workers start
// once), fixture loading, and a skip (exit code 77) when no GPU is visible.
#include <filesystem>
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/files.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench::gpu_test {

std::filesystem::path source_dir();  // $PTXBENCH_SOURCE_DIR, else the configured source tree
evaluator& shared_evaluator();
// The same with the hardware cross-check of the instructions stage on (local_evaluator_options::hw_check).
evaluator& hw_evaluator();
// Exits the process with 77 (ctest: skipped) and a message when there is no GPU.
void require_gpu();
// One line per evaluation, appended to $PTXBENCH_GPU_TEST_LOG (JSON lines) when set.
void log_result(const std::string& name, const evaluation_result& r);

}  // namespace ptxbench::gpu_test
