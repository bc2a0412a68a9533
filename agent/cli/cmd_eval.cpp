// ptxbench eval: judge one candidate (PTX + manifest, or a whole model reply)
// for one task and print the result as JSON and as a short table.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "agent/cli/commands.hpp"
#include "agent/prompt/prompt.hpp"
#include "evaluator/api/candidate.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/local.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench::cli {

task find_task(const std::string& id_or_path, const std::string& tasks_dir) {
  if (id_or_path.size() > 5 && id_or_path.substr(id_or_path.size() - 5) == ".json") return load_task_file(id_or_path);
  for (const auto& t : load_task_dir(tasks_dir))
    if (t.id == id_or_path) return t;
  throw input_error("unknown task '" + id_or_path + "' in " + tasks_dir + " (see `ptxbench tasks list`)");
}

std::string format_result_table(const evaluation_result& r) {
  std::ostringstream o;
  char line[512];
  o << "task result: " << (r.passed ? "PASSED" : "verdict " + verdict_name(r)) << " | GPU: " << r.gpu
    << " | evaluator " << r.evaluator_version << "\n";
  for (int i = 0; i < stage_count; ++i) {
    auto s = static_cast<stage>(i);
    auto it = r.stages.find(s);
    stage_outcome so = it == r.stages.end() ? stage_outcome{} : it->second;
    std::string reason = so.reason.size() > 90 ? so.reason.substr(0, 87) + "..." : so.reason;
    std::snprintf(line, sizeof line, "  %-13s %-10s %8.1f ms  %s\n", to_string(s), to_string(so.status), so.time_ms,
                  reason.c_str());
    o << line;
  }
  o << "  seed metrics: correct=" << (r.correct() ? "yes" : "no")
    << " instructions_executed=" << (r.instructions_executed() ? "yes" : "no") << " speedup="
    << (r.speedup() ? std::to_string(*r.speedup()) : std::string("n/a")) << "\n";
  if (!r.instructions.checks.empty()) o << format_instruction_table(r.instructions);
  if (!r.compile.kernels.empty()) o << format_resources(r.compile);
  return o.str();
}

namespace {

int cmd_eval(const option_values& values) {
  task t = find_task(values.text("eval.task"), values.text("tasks-dir"));
  evaluation_request req;
  req.t = t;
  if (auto reply = values.text_if("reply")) {
    if (values.has("ptx") || values.has("manifest"))
      throw input_error("give --ptx and --manifest, or --reply: not both");
    auto c = extract_candidate(read_text_file(*reply, "reply"));
    if (!c.problem.empty()) throw input_error("reply " + *reply + ": " + c.problem);
    req.ptx = c.ptx;
    req.manifest_text = c.manifest_text;
  } else {
    auto ptx = values.text_if("ptx");
    auto man = values.text_if("manifest");
    if (!ptx || !man) throw input_error("give --ptx and --manifest, or --reply");
    req.ptx = read_text_file(*ptx, "PTX");
    req.manifest_text = read_text_file(*man, "manifest");
  }
  const std::string gpu = values.text("gpu");
  req.run_gpu = gpu != "off";
  req.run_timing = !values.flag("no-timing");
  req.profile = values.flag("profile");
  local_evaluator_options eo;
  eo.gpu_mode = gpu;
  auto eval = make_local_evaluator(eo);
  auto result = eval->evaluate(req);
  if (!values.flag("table")) std::printf("%s\n", to_json(result).dump(2).c_str());
  if (!values.flag("json")) std::printf("%s", format_result_table(result).c_str());
  if (!values.flag("json") && req.profile)
    std::printf("profile%s\n", result.profile ? (" (" + std::to_string(int(result.profile->time_ms)) + " ms):\n" +
                                                   format_profile(*result.profile, 5)).c_str()
                                               : ": none (the candidate did not reach the performance stage)");
  if (!values.flag("json") && req.profile && result.profile && !result.profile->phase_ms.empty()) {
    std::string phases;
    for (const auto& [phase, ms] : result.profile->phase_ms)
      phases += (phases.empty() ? "" : ", ") + phase + " " + std::to_string(int(ms + 0.5));
    std::printf("profile phases (ms): %s\n", phases.c_str());
  }
  bool any_failed = std::any_of(result.stages.begin(), result.stages.end(),
                                [](const auto& kv) { return kv.second.status == stage_status::failed; });
  return any_failed ? exit_code::failures : exit_code::ok;
}

}  // namespace

const command_spec& eval_command() {
  static const command_spec spec{
      "eval", cmd_eval, "judge one PTX module + launch manifest for one task",
      "Judge one candidate for one task and print the result (JSON, then a table). Exits 1 when a stage failed.",
      {"eval.task", "ptx", "manifest", "reply", "tasks-dir", "gpu", "no-timing", "profile", "json", "table"},
      {"eval.task"}};
  return spec;
}

}  // namespace ptxbench::cli
