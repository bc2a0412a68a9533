#include "agent/cli/run_parts.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "agent/http/remote_evaluator.hpp"
#include "agent/store/store.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {
namespace {

// Answers recorded in another run database, by (task, sample, round).
std::unique_ptr<provider> make_db_replay_provider(const provider_config& c) {
  if (c.replay_db.empty() || c.replay_experiment.empty())
    throw input_error("llm.kind replay needs llm.replay_db and llm.replay_experiment");
  auto src = run_store::open(c.replay_db, true);
  auto exp = src->find_experiment(c.replay_experiment);
  if (!exp) throw input_error(c.replay_db + ": no experiment '" + c.replay_experiment + "' to replay");
  auto answers = std::make_shared<std::map<std::tuple<std::string, int, int>, completion>>();
  for (const auto& tr : src->trajectories(exp->id))
    for (const auto& tv : src->turns(tr.id)) {
      completion comp;
      comp.text = tv.turn.reply;
      comp.reasoning = tv.turn.reasoning;
      comp.finish_reason = tv.turn.finish_reason;
      comp.model = tv.turn.model;
      comp.prompt_tokens = tv.turn.prompt_tokens;
      comp.completion_tokens = tv.turn.completion_tokens;
      comp.latency_ms = 0.0;
      (*answers)[{tr.task_id, tr.sample, tv.turn.round}] = comp;
    }
  auto lookup = [answers](const turn_key& k) -> std::optional<completion> {
    auto it = answers->find({k.task_id, k.sample, k.round});
    if (it == answers->end()) return std::nullopt;
    return it->second;
  };
  return make_replay_provider(lookup, "replay of " + c.replay_experiment + " from " + c.replay_db);
}

void connect_model(const experiment_config& cfg, bool quiet, run_parts& parts) {
  if (cfg.llm.kind == provider_kind::embedded) {
    auto script = load_endpoint_script(cfg.endpoint_script);
    if (cfg.endpoint_latency_ms >= 0) script.latency_ms = cfg.endpoint_latency_ms;
    parts.endpoint = std::make_unique<embedded_endpoint>(script);
    provider_config pc = cfg.llm;
    pc.base_url = parts.endpoint->base_url();
    if (pc.model.empty()) pc.model = "embedded-script";
    parts.llm = make_http_provider(pc);
    if (!quiet) std::fprintf(stderr, "embedded endpoint at %s (%s)\n", pc.base_url.c_str(), cfg.endpoint_script.c_str());
  } else if (cfg.llm.kind == provider_kind::replay) {
    parts.llm = make_db_replay_provider(cfg.llm);
  } else {
    parts.llm = make_http_provider(cfg.llm);
  }
  // The teacher endpoint, when the config has one: embedded (its own script) or HTTP.
  if (!cfg.teacher) return;
  provider_config pc = cfg.teacher->llm;
  if (pc.kind == provider_kind::embedded) {
    parts.teacher_endpoint = std::make_unique<embedded_endpoint>(load_endpoint_script(cfg.teacher->endpoint_script));
    pc.base_url = parts.teacher_endpoint->base_url();
    if (pc.model.empty()) pc.model = "embedded-teacher";
  }
  parts.teacher = make_http_provider(pc);
  if (!quiet)
    std::fprintf(stderr, "teacher %s writes repair rounds after %d student failures\n",
                 parts.teacher->describe().c_str(), cfg.teacher->after_failures);
}

std::unique_ptr<evaluator> connect_evaluator(const experiment_config& cfg) {
  if (cfg.evaluator_urls.empty()) {
    local_evaluator_options eo;
    eo.gpu_mode = cfg.gpu;
    return make_local_evaluator(eo);
  }
  remote_evaluator_options ro;
  ro.urls = cfg.evaluator_urls;
  ro.timeout_s = cfg.evaluator_timeout_s;
  ro.max_wait_s = cfg.evaluator_max_wait_s;
  ro.max_attempts = cfg.evaluator_max_attempts;
  if (!cfg.evaluator_token_env.empty()) {
    const char* token = std::getenv(cfg.evaluator_token_env.c_str());
    if (!token || !*token) throw input_error("evaluator.token_env: " + cfg.evaluator_token_env + " is not set");
    ro.token = token;
  }
  return make_remote_evaluator(ro);
}

}  // namespace

run_parts make_run_parts(const experiment_config& cfg, bool quiet) {
  run_parts parts;
  connect_model(cfg, quiet, parts);
  parts.eval = connect_evaluator(cfg);
  return parts;
}

}  // namespace ptxbench::cli
