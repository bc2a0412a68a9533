#include "evaluator/pool/verdict.hpp"

#include <cstdio>

#include "evaluator/api/verdict.hpp"
#include "evaluator/pool/instruction_proof.hpp"

namespace ptxbench {

std::string compile_headline(const compile_report& report) {
  for (const auto& d : report.diagnostics) {
    if (d.severity != "error") continue;
    std::string h = "ptxas error";
    if (d.line > 0) h += " at line " + std::to_string(d.line);
    return h + ": " + d.message;
  }
  std::string log = report.log;
  size_t nl = log.find('\n');
  if (nl != std::string::npos) log.resize(nl);
  return log.empty() ? "compilation failed" : log;
}

void merge_worker_result(const protocol::worker_result& w, evaluation_result& r) {
  for (stage s : {stage::runtime, stage::correctness, stage::performance}) {
    auto it = w.partial.stages.find(s);
    if (it != w.partial.stages.end()) r.stages[s] = it->second;
  }
  r.runtime = w.partial.runtime;
  r.correctness = w.partial.correctness;
  r.performance = w.partial.performance;
}

namespace {

// The hardware cross-check over a stage the patched counts passed (see
// hw_cross_check.hpp); r.instructions.hardware records it either way.
void cross_check(evaluation_result& r, const sass_listing& sass, const std::vector<size_counts>& counted,
                 const hw_outcome& hw) {
  stage_outcome& o = r.stages[stage::instructions];
  if (!hw.asked) {
    r.instructions.hardware = "off";
    return;
  }
  if (!hw.ran) {
    r.instructions.hardware = "could not run: " + hw.missing;
    if (o.status == stage_status::passed)
      o = {stage_status::unverified, "the hardware cross-check could not run (not the kernel's failure): " + hw.missing,
           0.0};
    return;
  }
  if (counted.empty()) {
    r.instructions.hardware = "not compared: no patched counts";
    return;
  }
  std::string summary;
  const std::string disagreement = compare_hw_counts(sass, counted.back(), hw.counts, summary);
  r.instructions.hardware = disagreement.empty() ? "agreed: " + summary : "disagreed: " + disagreement;
  if (!disagreement.empty() && o.status != stage_status::failed)
    o = {stage_status::failed, "the kernel behaves differently when counted: " + disagreement, 0.0};
}

}  // namespace

void decide_instructions(evaluation_result& r, const sass_listing& sass, const task& t,
                         const std::vector<size_counts>& counted, const std::string& missing,
                         const std::string& counting_failure, const hw_outcome& hw) {
  bool reached = r.stages[stage::runtime].status == stage_status::passed &&
                 r.stages[stage::correctness].status == stage_status::passed;
  double t_ms = r.stages[stage::instructions].time_ms;
  if (reached && !counted.empty()) apply_dynamic_counts(r.instructions, sass, t, counted);
  if (reached && r.instructions.static_passed && !counting_failure.empty()) {
    r.stages[stage::instructions] = {stage_status::failed, "unprovable: " + counting_failure, 0.0};
  } else if (reached || !r.instructions.static_passed) {
    r.stages[stage::instructions] = instruction_outcome(r.instructions, missing);
    cross_check(r, sass, counted, hw);
  } else {
    stage_status runtime = r.stages[stage::runtime].status;
    bool evaluator = runtime == stage_status::error || r.stages[stage::correctness].status == stage_status::error;
    r.stages[stage::instructions] = {
        stage_status::not_run,
        evaluator ? std::string("not reached: the evaluator failed")
                  : std::string("not reached: ") + (runtime != stage_status::passed ? "runtime" : "correctness") +
                        " failed (targets are in the PTX and the SASS)",
        0.0};
  }
  r.stages[stage::instructions].time_ms = t_ms;
}

void finish_verdict(evaluation_result& r) {
  r.passed = true;
  for (int i = 0; i < stage_count; ++i)
    if (r.stages[stage(i)].status != stage_status::passed) r.passed = false;
  if (r.passed) {
    r.verdict = stage::performance;
    char buf[160];
    if (r.performance)
      std::snprintf(buf, sizeof buf, "passed: %.3f ms, %.2fx %s (threshold %.2fx)", r.performance->candidate_ms,
                    r.performance->speedup, r.performance->baseline_name.c_str(), r.performance->threshold);
    else
      std::snprintf(buf, sizeof buf, "passed");
    r.headline = buf;
    return;
  }
  // The verdict's stage as evaluator/api/verdict.hpp chooses it: the first
  // failed stage whatever evaluator error another stage holds, then the first
  // evaluator error, then the first stage not passed.
  const verdict v = verdict_of(r);
  r.verdict = v.at;
  if (v.kind == verdict_kind::error) {
    r.headline = std::string("evaluator error at ") + to_string(r.verdict) + ": " + r.stages[r.verdict].reason;
    return;
  }
  const stage_outcome& o = r.stages[r.verdict];
  r.headline = std::string(to_string(r.verdict)) + " " + to_string(o.status) + (o.reason.empty() ? "" : ": " + o.reason);
}

}  // namespace ptxbench
