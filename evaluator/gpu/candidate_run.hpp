#pragma once
// Running the candidate at one size: its buffers (guarded), its launches, and
// the checks around a run (guards, inputs unchanged, output comparison).
#include <cuda.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/gpu/device_memory.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/launcher.hpp"
#include "evaluator/gpu/module_globals.hpp"
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"

namespace ptxbench::gpu {

struct size_run {
  size_point size;
  std::string size_name;  // "M=384 N=256 K=1024"
  std::map<std::string, std::unique_ptr<guarded_buffer>> buffers;  // task tensors and scratch
  std::map<std::string, CUdeviceptr> addresses;
  launch_plan plan;
};

// Allocates every tensor and scratch buffer at `s` and prepares the launches
// (plan.refusal says why they cannot run). Throws cuda_error for the infrastructure.
std::unique_ptr<size_run> make_size_run(worker_state& w, CUmodule module, const task& t, const manifest& m,
                                        const size_point& s);

// Before every run of the candidate, checked or timed, the same state: guards
// re-armed, outputs poisoned (0xFF bytes: a NaN the references never
// produce), scratch set to zero or poison as the manifest asks, the module's
// .global sections back to their load-time contents. Asynchronous.
void prepare_buffers(worker_state& w, const task& t, const manifest& m, size_run& r,
                     const std::vector<global_section>& globals);

// Leaves nothing of the candidate's data in L2: eviction priorities of its
// buffers reset to normal, persisting lines reset, then a write over twice
// the L2 size. Asynchronous.
void make_l2_cold(worker_state& w, const size_run& r);

// Runs every launch in order, synchronising after each so a failure names its
// launch. Returns the runtime failure, if any; `context` is appended ("seed 1").
std::optional<runtime_report> run_launches(worker_state& w, size_run& r, double time_limit_ms,
                                           const std::string& context);

// Compares output `name` with its fp32 reference, with the task's tolerance.
output_check compare_with_reference(worker_state& w, const task& t, const std::string& name, const size_run& r,
                                    const float* ref);

// The totals of a comparison only (no maps of where bad elements sit), into
// `totals` (device memory, zeroed here), asynchronously: the check of a timed sample.
void enqueue_compare_totals(worker_state& w, const task& t, const std::string& name, const size_point& s,
                            CUdeviceptr output, const float* ref, compare_totals* totals);
// The verdict on one output from comparison totals, by the task's tolerance:
// no NaN or untouched element, at most max_mismatch_fraction outside
// atol + rtol*|ref|, and the normalised bounds (rel_l2, max_err_to_scale) where the task sets them.
output_check judge_totals(const task& t, const std::string& name, const std::string& size_name, int64_t elements,
                          const compare_totals& host);

// Checksum of every input tensor, in task order.
std::vector<uint64_t> input_checksums(worker_state& w, const task& t, const size_run& r);
uint64_t output_checksum(worker_state& w, const task& t, const size_run& r);

}  // namespace ptxbench::gpu
