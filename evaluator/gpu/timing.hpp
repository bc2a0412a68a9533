#pragma once
// The performance stage, nvbench's way, with every timed sample judged like a
// checked run. Per sample, outside the timed window: the module's globals
// restored, outputs poisoned, scratch re-initialised, guards re-armed (as
// before a checked run), then L2 made cold (eviction priorities of the
// candidate's buffers reset, persisting lines reset, a write over twice the
// L2 size). Inside the window: CUDA events on the launch stream around the
// launches only. After it: the outputs are compared on the device with the
// fp32 reference of the timing seed (inputs never used for checking); the
// totals of every sample are judged after the loop, and the last sample gets
// a full comparison. Candidate and baseline samples are interleaved: a
// warm-up round, then rounds until the stopping rule (timing_rule.hpp) says
// finished: converged (both sides at least 10 samples with a robust relative
// spread, 1.4826 x median absolute deviation / median, under 0.5%), or the
// time budget, twice the budget or the sample cap ended it; the report says
// which and keeps the raw samples. Medians are compared; inputs and guards
// are checked after the loop; a time under the physical floor is flagged.
// The steps, as nvbench's measure_cold takes them, are in timing_steps.hpp.
//
// Before choosing the baseline's plan and timing the first sample the worker
// asks the supervisor for the GPU (`w.await_go`), so that no other process of
// ours runs on it while anything is timed; after the last sample it says so
// (`w.gpu_idle`): the checks that follow may share the GPU.
#include <optional>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench::gpu {

struct timing_outcome {
  stage_outcome stage;
  performance_report report;
  std::optional<runtime_report> runtime;  // the candidate failed while being timed
  std::string correctness_failure;        // non-empty: a timed sample was wrong, or inputs/guards changed
  std::vector<output_check> timed_checks;  // the full comparison of the last sample (and the first wrong one)
  int samples_checked = 0;
  int samples_wrong = 0;
};

timing_outcome run_timing(worker_state& w, reference_cache& refs, const protocol::worker_job& job, size_run& timed,
                          const std::vector<global_section>& globals);

}  // namespace ptxbench::gpu
