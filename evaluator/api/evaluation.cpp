#include "evaluator/api/evaluation.hpp"

#include <limits>

#include "evaluator/common/json_path.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench {

const char* to_string(stage s) {
  switch (s) {
    case stage::format: return "format";
    case stage::compile: return "compile";
    case stage::runtime: return "runtime";
    case stage::correctness: return "correctness";
    case stage::instructions: return "instructions";
    case stage::performance: return "performance";
  }
  return "?";
}

stage parse_stage(const std::string& s) {
  for (int i = 0; i < stage_count; ++i)
    if (s == to_string(static_cast<stage>(i))) return static_cast<stage>(i);
  throw input_error("unknown stage '" + s +
                    "' (known: format, compile, runtime, correctness, instructions, performance)");
}

const char* to_string(stage_status s) {
  switch (s) {
    case stage_status::passed: return "passed";
    case stage_status::failed: return "failed";
    case stage_status::not_run: return "not_run";
    case stage_status::unverified: return "unverified";
    case stage_status::error: return "error";
  }
  return "?";
}

const char* to_string(sampling_stop s) {
  switch (s) {
    case sampling_stop::unrecorded: return "unrecorded";
    case sampling_stop::converged: return "converged";
    case sampling_stop::time_budget: return "time_budget";
    case sampling_stop::time_limit: return "time_limit";
    case sampling_stop::sample_cap: return "sample_cap";
  }
  return "?";
}

stage_status parse_stage_status(const std::string& s) {
  for (auto v : {stage_status::passed, stage_status::failed, stage_status::not_run, stage_status::unverified,
                 stage_status::error})
    if (s == to_string(v)) return v;
  throw input_error("unknown stage status '" + s + "'");
}

bool evaluation_result::correct() const {
  auto it = stages.find(stage::correctness);
  return it != stages.end() && it->second.status == stage_status::passed;
}

bool evaluation_result::instructions_executed() const {
  auto it = stages.find(stage::instructions);
  return it != stages.end() && it->second.status == stage_status::passed;
}

std::optional<double> evaluation_result::speedup() const {
  if (performance && performance->speedup > 0) return performance->speedup;
  return std::nullopt;
}

std::optional<stage> evaluation_result::furthest_passed() const {
  std::optional<stage> best;
  for (int i = 0; i < stage_count; ++i) {
    auto s = static_cast<stage>(i);
    auto it = stages.find(s);
    if (it == stages.end() || it->second.status != stage_status::passed) break;
    best = s;
  }
  return best;
}

bool evaluation_result::evaluator_error() const {
  bool error = false;
  for (const auto& [s, o] : stages) {
    if (o.status == stage_status::failed) return false;  // the candidate's failure stands
    error |= o.status == stage_status::error;
  }
  return error;
}

// ---- JSON -------------------------------------------------------------------

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ptxas_diagnostic, line, severity, message, quoted)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(kernel_resources, kernel, registers, spill_store_bytes,
                                                spill_load_bytes, stack_bytes, static_shared_bytes, constant_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(compile_report, arch, log, diagnostics, kernels, cubin_bytes,
                                                cache_hit)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(instruction_check::at_size, size, executed, flop_share, bytes_share,
                                                per_step, passed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(instruction_check, ptx, ptx_count, sass_opcodes, sass_count,
                                                executed, flop_share, is_math, passed, note, sizes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(counting_pass_time, size, launch, wall_ms, worker_ms, phase_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(instruction_report, static_passed, dynamic_ran, other_math_share,
                                                sass_source, checks, executed_by_opcode, static_ms, counting,
                                                hardware)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(seed_record, public_seeds, hidden, timing, counting)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(runtime_report, error, launch_index, size, context_lost, hidden_size)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(output_check, tensor, size, seed, hidden_seed, elements,
                                                max_abs_error, max_rel_error, rel_l2_error, mismatch_fraction,
                                                nan_count, untouched_count, where, max_err_to_scale, timed_run,
                                                passed, hidden_size)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(correctness_report, outputs, guards_intact, inputs_unchanged,
                                                stable_across_calls, timed_samples_checked, timed_samples_wrong, note)
NLOHMANN_JSON_SERIALIZE_ENUM(sampling_stop, {{sampling_stop::unrecorded, "unrecorded"},
                                            {sampling_stop::converged, "converged"},
                                            {sampling_stop::time_budget, "time_budget"},
                                            {sampling_stop::time_limit, "time_limit"},
                                            {sampling_stop::sample_cap, "sample_cap"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(performance_report, size, candidate_ms, candidate_rel_spread,
                                                candidate_samples, baseline_ms, baseline_rel_spread, baseline_samples,
                                                baseline_name, baseline_kind, speedup, candidate_tflops,
                                                baseline_tflops, peak_tflops, pct_of_peak, floor_ms, below_floor,
                                                output_rechecked, inputs_rechecked, unheld_samples, threshold, converged, stop, candidate_noise,
                                                baseline_noise, candidate_sample_ms, baseline_sample_ms,
                                                baseline_rel_l2, baseline_max_err_to_scale)

nlohmann::json to_json(const evaluation_result& r) {
  nlohmann::json j;
  j["passed"] = r.passed;
  // verdict_name: "error": the evaluator failed at stage `error_stage`, nothing
  // was learnt about the candidate; "partial": no stage failed, stage
  // `verdict_stage` is the first that could not run or be verified.
  const verdict v = verdict_of(r);
  j["verdict"] = verdict_name(v);
  if (v.kind == verdict_kind::error) j["error_stage"] = to_string(v.at);
  if (v.kind == verdict_kind::partial) j["verdict_stage"] = to_string(v.at);
  j["headline"] = r.headline;
  j["stages"] = nlohmann::json::object();
  for (const auto& [s, o] : r.stages)
    j["stages"][to_string(s)] = {{"status", to_string(o.status)}, {"reason", o.reason}, {"time_ms", o.time_ms}};
  j["compile"] = r.compile;
  j["instructions"] = r.instructions;
  if (r.runtime) j["runtime"] = *r.runtime;
  j["correctness"] = r.correctness;
  if (r.performance) j["performance"] = *r.performance;
  if (r.profile) j["profile"] = *r.profile;
  j["seeds"] = r.seeds;
  j["evaluator_version"] = r.evaluator_version;
  j["gpu"] = r.gpu;
  j["total_ms"] = r.total_ms;
  j["timeline"] = nlohmann::json::array();
  for (const auto& step : r.timeline) j["timeline"].push_back({step.what, step.at_ms});
  // The three seed metrics, flat, for readers that want only them.
  j["correct"] = r.correct();
  j["instructions_executed"] = r.instructions_executed();
  if (auto s = r.speedup()) j["speedup"] = *s;
  else j["speedup"] = nullptr;
  return j;
}

namespace {

// JSON has no NaN or infinity: nlohmann writes a non-finite double as null.
// Inside the reports every number field is a plain double or integer (the
// optional parts are whole objects, checked above them), so a null there is a
// figure that was not finite, read back as NaN: a kernel whose output is all
// NaN must get its correctness verdict, not an evaluator error.
nlohmann::json nulls_as_nan(nlohmann::json j) {
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (j.is_object() || j.is_array())
    for (auto& v : j) v = nulls_as_nan(std::move(v));
  return j;
}

}  // namespace

evaluation_result evaluation_result_from_json(const nlohmann::json& j) {
  evaluation_result r;
  try {
    r.passed = j.value("passed", false);
    std::string v = j.value("verdict", "format");
    if (v == "error") v = j.value("error_stage", "runtime");
    if (v == "partial") v = j.value("verdict_stage", "runtime");
    r.verdict = v == "passed" ? stage::performance : parse_stage(v);
    r.headline = j.value("headline", "");
    if (j.contains("stages"))
      for (auto it = j["stages"].begin(); it != j["stages"].end(); ++it) {
        stage_outcome o;
        o.status = parse_stage_status(it.value().value("status", "not_run"));
        o.reason = it.value().value("reason", "");
        o.time_ms = it.value().contains("time_ms") && it.value()["time_ms"].is_number()
                        ? it.value()["time_ms"].get<double>()
                        : 0.0;
        r.stages[parse_stage(it.key())] = o;
      }
    if (j.contains("compile")) r.compile = nulls_as_nan(j["compile"]).get<compile_report>();
    if (j.contains("instructions")) r.instructions = nulls_as_nan(j["instructions"]).get<instruction_report>();
    if (j.contains("runtime") && !j["runtime"].is_null()) r.runtime = nulls_as_nan(j["runtime"]).get<runtime_report>();
    if (j.contains("correctness")) r.correctness = nulls_as_nan(j["correctness"]).get<correctness_report>();
    if (j.contains("performance") && !j["performance"].is_null()) {
      r.performance = nulls_as_nan(j["performance"]).get<performance_report>();
      // Informational and bounded: a longer list than a worker writes is cut.
      for (auto* v : {&r.performance->candidate_sample_ms, &r.performance->baseline_sample_ms})
        if (v->size() > performance_report::k_kept_samples) v->resize(performance_report::k_kept_samples);
    }
    if (j.contains("profile") && !j["profile"].is_null()) r.profile = nulls_as_nan(j["profile"]).get<profile_report>();
    if (j.contains("seeds") && j["seeds"].is_object()) r.seeds = j["seeds"].get<seed_record>();
    r.evaluator_version = j.value("evaluator_version", "");
    r.gpu = j.value("gpu", "");
    r.total_ms = j.contains("total_ms") && j["total_ms"].is_number() ? j["total_ms"].get<double>() : 0.0;
    // Informational: malformed steps are skipped, never an error; bounded.
    if (j.contains("timeline") && j["timeline"].is_array())
      for (const auto& step : j["timeline"]) {
        if (r.timeline.size() >= evaluation_result::k_timeline_steps) break;
        if (step.is_array() && step.size() == 2 && step[0].is_string() && step[1].is_number())
          r.timeline.push_back({step[0].get<std::string>().substr(0, 200), step[1].get<double>()});
      }
  } catch (const nlohmann::json::exception& e) {
    throw input_error(std::string("evaluation result JSON: ") + e.what());
  }
  return r;
}

nlohmann::json to_json(const evaluation_request& r) {
  return {{"task", task_to_json(r.t)},     {"ptx", r.ptx},
          {"manifest_text", r.manifest_text}, {"seeds", r.seeds},
          {"hidden_seed", r.hidden_seed},   {"timing_seed", r.timing_seed}, {"run_gpu", r.run_gpu},
          {"run_timing", r.run_timing},     {"time_limit_ms", r.time_limit_ms},
          {"timing_budget_ms", r.timing_budget_ms}, {"profile", r.profile}};
}

evaluation_request evaluation_request_from_json(const nlohmann::json& j) {
  evaluation_request r;
  try {
    r.t = parse_task(j.at("task"), "request");
    r.ptx = j.at("ptx").get<std::string>();
    r.manifest_text = j.at("manifest_text").get<std::string>();
    r.seeds = j.value("seeds", r.seeds);
    r.hidden_seed = j.value("hidden_seed", r.hidden_seed);
    r.timing_seed = j.value("timing_seed", r.timing_seed);
    r.run_gpu = j.value("run_gpu", r.run_gpu);
    r.run_timing = j.value("run_timing", r.run_timing);
    r.profile = j.value("profile", r.profile);
    r.time_limit_ms = j.value("time_limit_ms", r.time_limit_ms);
    r.timing_budget_ms = j.value("timing_budget_ms", r.timing_budget_ms);
  } catch (const nlohmann::json::exception& e) {
    throw input_error(std::string("evaluation request JSON: ") + e.what());
  }
  return r;
}

}  // namespace ptxbench
