#pragma once
// Judging one candidate and recording the verdict, shared by the repair loop,
// replay and mutate (docs/design.md, "Replay"), so that the same candidate and
// settings give the same request and the same row; the containment of
// judgings that end the process is in contained.hpp.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/store/store.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench {

struct judge_settings {
  std::vector<uint64_t> seeds{1, 2};  // public seeds
  uint64_t hidden_seed = 0;           // 0: drawn at random by the evaluator
  uint64_t timing_seed = 0;
  bool run_gpu = true;
  bool run_timing = true;
  bool profile = false;  // profile a candidate that reaches the performance stage
  double time_limit_ms = 10000;
  double timing_budget_ms = 1500;
};

// The settings an experiment ran with, from its stored config: seeds,
// gpu ("off": no GPU stages), time_limit_ms, timing_budget_ms. Fields the
// config lacks keep the defaults above.
judge_settings judge_settings_from_config(const nlohmann::json& config);
// `base` with the seeds an earlier evaluation recorded (its result's `seeds`:
// public, hidden, timing), so a replay draws the very inputs it was judged on.
// A result without seeds leaves `base` as it is.
judge_settings with_recorded_seeds(judge_settings base, const nlohmann::json& result);

evaluation_request judge_request(const task& t, const candidate_row& c, const judge_settings& s);

// The three results judging builds without the evaluator's word, each built
// here alone (the loop, replay, mutate and evald take them from here):
// A reply without a judgeable candidate: format failed with `problem`, every
// later stage not run.
evaluation_result format_failure_result(const std::string& problem, const std::string& evaluator_version);
// The evaluator threw `what` while judging: status error at runtime, the
// evaluator's failure and never the candidate's verdict (verdict "error").
evaluation_result evaluator_failure_result(const std::string& what, const std::string& evaluator_version);
// The agent could not judge the candidate (`step` failed with `message`: the
// reply parser, or a judging that kept ending the process): status error at
// format, every other stage not run (verdict "error").
evaluation_result agent_error_result(const std::string& step, const std::string& message,
                                     const std::string& evaluator_version);

// A candidate without PTX gets format_failure_result without a call to the
// evaluator; an evaluator that throws gives evaluator_failure_result, except
// evaluator_unavailable, which propagates (not judged at all).
evaluation_result judge_candidate(evaluator& judge, const task& t, const candidate_row& c, const judge_settings& s);

// The evaluation row that records `r` (verdict_name, seed metrics, result JSON).
evaluation_row evaluation_row_of(const evaluation_result& r, int64_t candidate_id);
// Judges `c` and writes its evaluation (linked to `origin` when re-doing one);
// returns the written row, id included, and the result in *result.
evaluation_row judge_and_record(run_store& store, evaluator& judge, const task& t, const candidate_row& c,
                                const judge_settings& s, evaluation_result* result,
                                std::optional<int64_t> origin = std::nullopt);

}  // namespace ptxbench
