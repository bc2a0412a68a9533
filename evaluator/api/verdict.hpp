#pragma once
// A result's verdict and the order of results: the one policy of verdict names
// and ranking that the repair loop, replay, the stored run data, mutate, the
// exports and reports, evald and the viewer all use, so that the same
// evaluations get the same verdict wherever they are read.
#include <array>
#include <optional>
#include <string>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench {

// What the verdict and the ranking read of an evaluation: each stage's status
// and the measured speedup. Made from a result (standing_of), or by agent/data
// from a stored row that may lack the stage statuses.
struct standing {
  bool judged = false;  // false: no evaluation at all (never judged)
  std::array<stage_status, stage_count> stages{};  // every stage not_run unless set
  std::optional<double> speedup;

  standing() { stages.fill(stage_status::not_run); }
  stage_status at(stage s) const { return stages[static_cast<size_t>(s)]; }
};
// A result's standing (judged). A result marked passed has every stage passed.
standing standing_of(const evaluation_result& r);

// The verdict:
//  none     never judged
//  failed   stage `at` failed, the first in table order that did, whatever
//           evaluator error another stage holds (a failure is a completed
//           check of the candidate; an error must never hide it)
//  error    no stage failed and the evaluator failed at stage `at` (the first
//           with status error): nothing is known of the candidate. Never fed
//           back as its fault, never counted in rates, never exported.
//  partial  no stage failed, yet not every stage passed: `at` is the first
//           that could not run here (no GPU, another architecture) or could
//           not be verified. Never a failure of `at`.
//  passed   every stage passed
enum class verdict_kind { none, error, failed, partial, passed };
struct verdict {
  verdict_kind kind = verdict_kind::none;
  stage at = stage::format;  // meaningful for error, failed and partial
};
verdict verdict_of(const standing& s);
verdict verdict_of(const evaluation_result& r);

// The name stored (evaluations.verdict, trajectories.final_verdict) and
// written (a result's "verdict"): "none", "error", the failed stage's name
// ("format" ... "performance"), "partial" or "passed".
std::string verdict_name(const verdict& v);
std::string verdict_name(const evaluation_result& r);
// The inverse for the names above; nullopt for any other text. Stage names
// read as failed verdicts; "error" and "partial" come back with `at` format
// (the name does not say where).
std::optional<verdict> parse_verdict_name(const std::string& name);

// Ranking candidates (a trajectory's best candidate and final verdict, the
// best sibling of a branched round, exports, reports). An evaluation with a
// verdict (failed, partial, passed) beats one without (error, none): an
// evaluator error never wins over a verdict. Two with verdicts are compared
// stage by stage in table order by stage_score, and the first stage where they
// differ decides (stages do not always fail in table order: a missing
// instruction fails without a GPU while runtime is not run). Two without a
// verdict are equal.
// stage_score: 2 passed, 1 not run or unverified, 0 failed (error: 1).
int stage_score(stage_status s);
bool got_further(const standing& a, const standing& b);
// got_further; on a tie, a measured speedup beats none and a higher one a lower.
bool better(const standing& a, const standing& b);
bool got_further(const evaluation_result& a, const evaluation_result& b);
bool better(const evaluation_result& a, const evaluation_result& b);

}  // namespace ptxbench
