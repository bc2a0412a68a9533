#pragma once
// The evaluator interface over HTTP: each evaluate() is one POST
// /v1/evaluate to a `ptxbench evald` (agent/service), so an orchestrator on a
// CPU node judges candidates on GPU nodes with the same verdicts as in-process.
// Several services are balanced by least requests in flight from this client
// (ties round-robin); a service that refuses the connection or answers 5xx is
// skipped for the next one, and a 429 waits its Retry-After. It lives here
// because agent/llm is the only folder that sees libcurl.
#include <memory>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench {

struct remote_evaluator_options {
  std::vector<std::string> urls;  // "http://gpu-node-3:8477"; one at least
  std::string token;              // bearer token ("" = none)
  double timeout_s = 900;         // one evaluation, the service's queueing included
  int max_attempts = 6;           // per evaluation, over all services
  double max_retry_wait_s = 30;   // longest Retry-After honoured before giving up on a full service
};

// Asks each service's /v1/health: throws input_error when one is not an
// evald or the services run different evaluator versions (their verdicts
// would not be comparable), std::runtime_error when none answers.
std::unique_ptr<evaluator> make_remote_evaluator(const remote_evaluator_options& options);

}  // namespace ptxbench
