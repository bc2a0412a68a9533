#pragma once
// What run wires together from its config: the model endpoint (embedded,
// recorded answers or HTTP), the teacher, and the evaluator (in-process or
// evald services).
#include <memory>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/llm/provider.hpp"
#include "agent/loop/experiment_config.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench::cli {

struct run_parts {
  std::unique_ptr<embedded_endpoint> endpoint;          // llm.kind embedded
  std::unique_ptr<provider> llm;
  std::unique_ptr<embedded_endpoint> teacher_endpoint;  // teacher of kind embedded
  std::unique_ptr<provider> teacher;                    // null without a teacher
  std::unique_ptr<evaluator> eval;
};

// Starts the embedded endpoints and connects the providers and the evaluator.
// Throws input_error for a config they cannot use (a replay source without
// the experiment, an unset token variable).
run_parts make_run_parts(const experiment_config& cfg, bool quiet);

}  // namespace ptxbench::cli
