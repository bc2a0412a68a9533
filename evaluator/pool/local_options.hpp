#pragma once
// How the local evaluator is set up: its options, else the environment's
// PTXBENCH_* variables, else the defaults (evaluator/api/local.hpp says why
// each default is what it is). Read once, when the evaluator is made.
#include <string>
#include <vector>

#include "evaluator/api/local.hpp"

namespace ptxbench {

// The ptxbench-worker executable: the option, $PTXBENCH_WORKER, beside the
// running binary, else the build tree's.
std::string find_worker(const local_evaluator_options& o);
// The CUDA_VISIBLE_DEVICES value of each of `count` GPU slots: the entries of
// the supervisor's own list when it has one (a Slurm allocation: "2,5" or
// UUIDs), else the device indexes 0..count-1.
std::vector<std::string> visible_device_ids(int count);
// Spare counting workers kept per GPU ($PTXBENCH_SPARE_WORKERS, 0-16, else 6).
int spare_workers(const local_evaluator_options& o);
// Main workers per GPU ($PTXBENCH_MAIN_WORKERS, 1-8, else 2).
int main_workers(const local_evaluator_options& o);
// CUDA_DEVICE_MAX_CONNECTIONS of the spares ($PTXBENCH_SPARE_CONNECTIONS,
// 0 = the environment's own, 1-32, else 1).
int spare_connections(const local_evaluator_options& o);
// Counting passes beside the main job ($PTXBENCH_SPECULATIVE_COUNTING, else on).
bool speculative_counting(const local_evaluator_options& o);
// The hardware cross-check ($PTXBENCH_HW_CHECK, else for kernels that read a timer).
// The values are local_evaluator_options::hw_check's.
enum class hw_check_policy { off = 0, every_candidate = 1, timer_readers = 2 };
hw_check_policy hw_check(const local_evaluator_options& o);
// Whether a candidate with this PTX gets the cross-check under `policy`.
bool wants_hw_check(hw_check_policy policy, const std::string& ptx);

}  // namespace ptxbench
