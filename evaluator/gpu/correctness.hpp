#pragma once
// The runtime and correctness stages: every declared size (smallest first,
// the timed size last), every public seed and the hidden seed, run one after
// another on the same buffers so a kernel that reuses an earlier call's
// result is caught by the next seed's fresh inputs.
#include <cuda.h>

#include <memory>
#include <optional>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench::gpu {

struct correctness_outcome {
  stage_outcome runtime_stage;
  stage_outcome correctness_stage;
  std::optional<runtime_report> runtime;
  correctness_report report;
  std::unique_ptr<size_run> timed;  // the timed size's buffers and launches, reused for timing
};

// Every run starts from prepare_buffers and make_l2_cold, exactly as a timed
// sample does, so a kernel cannot tell checked runs from timed ones. A run
// that damaged the guards, failed or left a reference damaged drops the
// reference cache.
correctness_outcome run_correctness(worker_state& w, reference_cache& refs, CUmodule module,
                                    const std::vector<global_section>& globals, const protocol::worker_job& job);

// Checks the outputs of `run` against `ref` (and that `ref` itself is intact);
// appends the checks to `report`, returns whether all passed.
bool check_outputs(worker_state& w, reference_cache& refs, const task& t, const size_run& run,
                   const reference_set& ref, uint64_t seed, bool hidden, correctness_report& report);

}  // namespace ptxbench::gpu
