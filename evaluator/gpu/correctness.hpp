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
#include "evaluator/pool/protocol.hpp"

namespace ptxbench::gpu {

struct correctness_outcome {
  stage_outcome runtime_stage;
  stage_outcome correctness_stage;
  std::optional<runtime_report> runtime;
  correctness_report report;
  // The timed size's buffers, holding the hidden seed's inputs and outputs, and its references.
  std::unique_ptr<size_run> timed;
  const reference_set* timed_refs = nullptr;
};

correctness_outcome run_correctness(worker_state& w, reference_cache& refs, CUmodule module,
                                    const protocol::worker_job& job);

// One line for the model about the first failing check of a report.
std::string correctness_headline(const correctness_report& r);

}  // namespace ptxbench::gpu
