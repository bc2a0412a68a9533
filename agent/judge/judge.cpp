#include "agent/judge/judge.hpp"

#include "evaluator/api/verdict.hpp"

namespace ptxbench {
namespace {

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::optional<uint64_t> seed_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned()) return std::nullopt;
  return j[key].get<uint64_t>();
}

}  // namespace

judge_settings judge_settings_from_config(const nlohmann::json& config) {
  judge_settings s;
  if (!config.is_object()) return s;
  if (config.contains("seeds") && config["seeds"].is_array() && !config["seeds"].empty()) {
    std::vector<uint64_t> seeds;
    for (const auto& v : config["seeds"]) {
      if (!v.is_number_unsigned()) return s;  // not a config this version wrote: keep the defaults
      seeds.push_back(v.get<uint64_t>());
    }
    s.seeds = seeds;
  }
  if (config.contains("gpu") && config["gpu"] == "off") s.run_gpu = false;
  if (config.contains("feedback") && config["feedback"] == "profile") s.profile = true;
  if (auto v = number_at(config, "time_limit_ms"); v && *v > 0) s.time_limit_ms = *v;
  if (auto v = number_at(config, "timing_budget_ms"); v && *v > 0) s.timing_budget_ms = *v;
  return s;
}

judge_settings with_recorded_seeds(judge_settings base, const nlohmann::json& result) {
  if (!result.is_object() || !result.contains("seeds") || !result["seeds"].is_object()) return base;
  const auto& seeds = result["seeds"];
  if (seeds.contains("public_seeds") && seeds["public_seeds"].is_array() && !seeds["public_seeds"].empty()) {
    std::vector<uint64_t> pub;
    for (const auto& v : seeds["public_seeds"]) {
      if (!v.is_number_unsigned()) return base;
      pub.push_back(v.get<uint64_t>());
    }
    base.seeds = pub;
  }
  if (auto h = seed_at(seeds, "hidden"); h && *h) base.hidden_seed = *h;
  if (auto t = seed_at(seeds, "timing"); t && *t) base.timing_seed = *t;
  return base;
}

evaluation_request judge_request(const task& t, const candidate_row& c, const judge_settings& s) {
  evaluation_request req;
  req.t = t;
  req.ptx = c.ptx;
  req.manifest_text = c.manifest;
  req.seeds = s.seeds;
  req.hidden_seed = s.hidden_seed;
  req.timing_seed = s.timing_seed;
  req.run_gpu = s.run_gpu;
  req.run_timing = s.run_timing;
  req.profile = s.profile;
  req.time_limit_ms = s.time_limit_ms;
  req.timing_budget_ms = s.timing_budget_ms;
  return req;
}

evaluation_result format_failure_result(const std::string& problem, const std::string& evaluator_version) {
  evaluation_result r;
  r.verdict = stage::format;
  r.passed = false;
  r.headline = "format: " + problem;
  r.stages[stage::format] = {stage_status::failed, problem, 0.0};
  for (int i = 1; i < stage_count; ++i)
    r.stages[static_cast<stage>(i)] = {stage_status::not_run, "an earlier stage failed", 0.0};
  r.evaluator_version = evaluator_version;
  return r;
}

evaluation_result evaluator_failure_result(const std::string& what, const std::string& evaluator_version) {
  evaluation_result r = format_failure_result("", evaluator_version);
  r.verdict = stage::runtime;
  r.headline = "evaluator error at runtime: " + what;
  r.stages[stage::format] = {stage_status::not_run, "evaluator failed", 0.0};
  r.stages[stage::runtime] = {stage_status::error, "evaluator failure: " + what, 0.0};
  return r;
}

evaluation_result agent_error_result(const std::string& step, const std::string& message,
                                     const std::string& evaluator_version) {
  evaluation_result r = format_failure_result("", evaluator_version);
  r.headline = "not judged: " + step + " failed: " + message;
  r.stages[stage::format] = {stage_status::error, step + " failed: " + message, 0.0};
  for (int i = 1; i < stage_count; ++i)
    r.stages[static_cast<stage>(i)] = {stage_status::not_run, "the candidate was not judged", 0.0};
  return r;
}

evaluation_result judge_candidate(evaluator& judge, const task& t, const candidate_row& c, const judge_settings& s) {
  if (!c.format_problem.empty() || c.ptx.empty()) {
    auto r = format_failure_result(c.format_problem.empty() ? "no PTX in the reply" : c.format_problem, judge.version());
    r.gpu = judge.gpu_description();
    return r;
  }
  std::string what = "unknown exception";
  try {
    return judge.evaluate(judge_request(t, c, s));
  } catch (const evaluator_unavailable&) {
    throw;  // not judged at all: the caller leaves the turn for a resume
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  // An infrastructure failure while judging: recorded with status error
  // (never the candidate's verdict) rather than losing the turn.
  return evaluator_failure_result(what, judge.version());
}

evaluation_row evaluation_row_of(const evaluation_result& r, int64_t candidate_id) {
  evaluation_row row;
  row.candidate_id = candidate_id;
  row.evaluator_version = r.evaluator_version;
  row.gpu = r.gpu;
  row.verdict = verdict_name(r);  // as to_json writes it
  row.passed = r.passed;
  row.correct = r.correct();
  row.instructions_ok = r.instructions_executed();
  row.speedup = r.speedup();
  row.result = to_json(r);
  return row;
}

evaluation_row judge_and_record(run_store& store, evaluator& judge, const task& t, const candidate_row& c,
                                const judge_settings& s, evaluation_result* result, std::optional<int64_t> origin) {
  *result = judge_candidate(judge, t, c, s);
  evaluation_row row = evaluation_row_of(*result, c.id);
  row.origin_evaluation_id = origin;
  row.id = store.record_evaluation(row);
  return row;
}

}  // namespace ptxbench
