#pragma once
// The evaluator interface over HTTP: each evaluate() is one POST
// /v1/evaluate to a `ptxbench evald` (agent/service), so an orchestrator on a
// CPU node judges candidates on GPU nodes with the same verdicts as in-process.
//
// Several services are balanced by least requests in flight from this client
// (ties round-robin) among those that are up. A service that fails (no
// connection, a timeout, a cut-off or oversized answer, 5xx, a 4xx other than
// "this request is wrong", an answer that is not a well-formed result of this
// evaluator version for this request) is down for a back-off (1 s doubling to
// 30 s) and the attempt goes to another; a 429 keeps it out for its
// Retry-After (at least 0.5 s). Every wait is cut short by cancel_transfers()
// (transport.hpp; Ctrl-C in `run` calls it through cancel_llm_calls()).
//
// Outcomes: a result; std::runtime_error when the services answered and could
// not judge this request (400/413/422, or every attempt's answer was an error):
// an `error` evaluation, never the candidate's verdict; evaluator_unavailable
// when no service could be reached for max_wait_s, every queue stayed full
// that long, or the run is stopping: nothing is recorded, a resume judges the
// candidate.
//
// Trust: a service's results are taken as its verdicts. The client checks
// their form (every stage, this evaluator version, no GPU stage run when none
// was asked for, the answer echoing this request's X-Request-Id) but cannot
// tell a service that lies; run only services you control (docs/scale.md).
// Every answer is read with the bounded JSON parser (evaluator/common/json_path.hpp).
#include <memory>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench {

struct remote_evaluator_options {
  std::vector<std::string> urls;  // "http://gpu-node-3:8477"; one at least
  std::string token;              // bearer token ("" = none)
  double timeout_s = 300;         // one attempt, the service's queueing included
  int max_attempts = 6;           // failed attempts per evaluation, over all services
  double max_retry_wait_s = 30;   // longest Retry-After honoured at once
  double max_wait_s = 300;        // how long one evaluation waits for a service that is up and not full
};

// Asks every service's /v1/health at once: throws input_error when one is not
// an evald or the services run different evaluator versions (their verdicts
// would not be comparable), std::runtime_error when none answers. A service
// that did not answer starts down (its back-off) and is tried again later.
std::unique_ptr<evaluator> make_remote_evaluator(const remote_evaluator_options& options);

}  // namespace ptxbench
