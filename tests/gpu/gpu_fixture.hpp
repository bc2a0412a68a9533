#pragma once
// Shared by the GPU tests: one evaluator for the whole process (workers start
// once), fixture loading, and the rule for a machine where the evaluator finds
// no usable GPU: a skip (exit code 77) only where there is no GPU at all.
#include <filesystem>
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench::gpu_test {

std::filesystem::path source_dir();  // $PTXBENCH_SOURCE_DIR, else the configured source tree
evaluator& shared_evaluator();
// The same with the hardware cross-check of the instructions stage on (local_evaluator_options::hw_check).
evaluator& hw_evaluator();
// Returns when the evaluator has a GPU. Otherwise: where the machine has no
// GPU at all (no_gpu_at_all), prints why and exits the process with 77
// (ctest: skipped); where the NVIDIA driver finds a device (or the driver is
// there but fails), fails the test case with the evaluator's reason.
void require_gpu();
// Why this machine has no NVIDIA GPU at all, asked of the driver (libcuda.so.1
// absent with no /dev/nvidia* node, the toolkit's stub, or no device); empty
// when a GPU is there, usable or not.
std::string no_gpu_at_all();
// One line per evaluation, appended to $PTXBENCH_GPU_TEST_LOG (JSON lines) when set.
void log_result(const std::string& name, const evaluation_result& r);

}  // namespace ptxbench::gpu_test
