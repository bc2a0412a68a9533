#pragma once
// One evaluation as a client sends it to the service, parsed with the JSON
// path of every bad field:
//   {"task": "<id>" | {task document},
//    "ptx": "...", "manifest": "..." | {...}      (or)      "reply": "<whole model reply>",
//    "seeds": [1, 2], "hidden_seed": 0, "timing_seed": 0, "run_gpu": true, "run_timing": true,
//    "time_limit_ms": 10000, "timing_budget_ms": 1500}
// A reply without a judgeable candidate is no input error: it is a candidate
// that fails `format` (a reward of zero, not a rejected request).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench::service {

struct evaluate_item {
  evaluation_request request;
  std::string format_problem;  // non-empty: the reply held no candidate; not evaluated
};

// Bounds on what one item may ask for (hostile clients).
constexpr double k_max_time_limit_ms = 60000;
constexpr double k_max_timing_budget_ms = 20000;
constexpr size_t k_max_seeds = 16;

// Throws input_error naming `path` (e.g. "$.requests[3].task") and the field.
evaluate_item parse_evaluate_item(const nlohmann::json& j, const std::string& path,
                                  const std::map<std::string, task>& tasks);

}  // namespace ptxbench::service
