#include "agent/service/request.hpp"

#include "agent/service/text.hpp"
#include "evaluator/api/candidate.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::service {

evaluate_item parse_evaluate_item(const nlohmann::json& j, const std::string& path,
                                  const std::map<std::string, task>& tasks) {
  json_reader r(j, path);
  r.expect_object();
  r.reject_unknown({"task", "ptx", "manifest", "reply", "seeds", "hidden_seed", "timing_seed", "run_gpu",
                    "run_timing", "time_limit_ms", "timing_budget_ms"});
  evaluate_item item;
  evaluation_request& req = item.request;
  if (!r.has("task")) r.fail_key("task", "missing: a task id or a task document");
  const auto& tj = j.at("task");
  if (tj.is_string()) {
    auto it = tasks.find(tj.get<std::string>());
    if (it == tasks.end())
      r.fail_key("task", "unknown task '" + truncated(tj.get<std::string>(), 100) + "' (GET /v1/tasks lists them)");
    req.t = it->second;
  } else if (tj.is_object()) {
    req.t = parse_task(tj, "", path + ".task");
  } else {
    r.fail_key("task", "expected a task id (string) or a task document (object)");
  }
  const bool has_reply = r.has("reply"), has_ptx = r.has("ptx"), has_manifest = r.has("manifest");
  if (has_reply && (has_ptx || has_manifest)) r.fail_key("reply", "give either reply, or ptx and manifest, not both");
  if (has_reply) {
    auto c = extract_candidate(r.get_string("reply"));
    item.format_problem = c.problem;
    req.ptx = c.ptx;
    req.manifest_text = c.manifest_text;
  } else {
    if (!has_ptx) r.fail_key("ptx", "missing: give ptx and manifest, or reply");
    if (!has_manifest) r.fail_key("manifest", "missing: give ptx and manifest, or reply");
    req.ptx = r.get_string("ptx");
    const auto& mj = j.at("manifest");
    if (mj.is_string()) req.manifest_text = mj.get<std::string>();
    else if (mj.is_object()) req.manifest_text = json_text(mj);
    else r.fail_key("manifest", "expected the manifest as JSON text (string) or an object");
  }
  if (r.has("seeds")) {
    auto s = r.at("seeds");
    s.expect_array();
    if (s.json().empty() || s.json().size() > k_max_seeds)
      s.fail("expected 1 to " + std::to_string(k_max_seeds) + " seeds");
    req.seeds.clear();
    for (size_t i = 0; i < s.json().size(); ++i) {
      if (!s.json()[i].is_number_unsigned()) s.at(i).fail("expected a non-negative integer seed");
      req.seeds.push_back(s.json()[i].get<uint64_t>());
    }
  }
  for (const char* key : {"hidden_seed", "timing_seed"}) {
    if (!r.has(key)) continue;
    if (!j.at(key).is_number_unsigned()) r.fail_key(key, "expected a non-negative integer (0: drawn at random)");
    (std::string(key) == "hidden_seed" ? req.hidden_seed : req.timing_seed) = j.at(key).get<uint64_t>();
  }
  req.run_gpu = r.get_bool("run_gpu", req.run_gpu);
  req.run_timing = r.get_bool("run_timing", req.run_timing);
  req.time_limit_ms = r.get_number("time_limit_ms", req.time_limit_ms);
  if (!(req.time_limit_ms > 0 && req.time_limit_ms <= k_max_time_limit_ms))
    r.fail_key("time_limit_ms", "expected more than 0 and at most " + std::to_string(int(k_max_time_limit_ms)));
  req.timing_budget_ms = r.get_number("timing_budget_ms", req.timing_budget_ms);
  if (!(req.timing_budget_ms > 0 && req.timing_budget_ms <= k_max_timing_budget_ms))
    r.fail_key("timing_budget_ms", "expected more than 0 and at most " + std::to_string(int(k_max_timing_budget_ms)));
  return item;
}

}  // namespace ptxbench::service
