// ptxbench run: the generate -> evaluate -> repair loop.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/http/remote_evaluator.hpp"
#include "agent/loop/coverage.hpp"
#include "agent/loop/orchestrator.hpp"
#include "agent/store/store.hpp"
#include "evaluator/api/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {

namespace {

volatile std::sig_atomic_t g_signals = 0;

// The first Ctrl-C stops the run: in-flight LLM calls are aborted, and what is
// stored is complete, so a resume loses nothing. A second one exits at once.
void on_signal(int) {
  if (g_signals) _exit(exit_code::interrupted);
  g_signals = 1;
  orchestrator::request_stop();
  cancel_llm_calls();
}

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

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

}  // namespace

int cmd_run(int argc, char** argv) {
  cxxopts::Options opts(argv[0], "Run (or resume) an experiment: tasks x samples x rounds of generate -> evaluate -> feedback.");
  opts.add_options()
    ("config", "experiment config (JSON)", cxxopts::value<std::string>()->default_value("configs/demo.json"))
    ("name", "experiment name (unique in the database)", cxxopts::value<std::string>())
    ("db", "run database path", cxxopts::value<std::string>())
    ("tasks", "comma-separated task ids (default: the config's, else all)", cxxopts::value<std::string>())
    ("samples", "trajectories per task", cxxopts::value<std::string>())
    ("rounds", "rounds per trajectory (1 = no repair)", cxxopts::value<std::string>())
    ("concurrency", "trajectories in flight", cxxopts::value<std::string>())
    ("feedback", "feedback detail: none | stage | full", cxxopts::value<std::string>())
    ("stop", "stop policy: first_pass | all_rounds", cxxopts::value<std::string>())
    ("history", "history policy: all | last_k", cxxopts::value<std::string>())
    ("history-k", "turns kept with --history last_k", cxxopts::value<std::string>())
    ("max-context-tokens", "the model's context: older PTX elided and older attempts dropped to fit it; a "
                           "context-length error is retried once with half the history (0: no limit)",
     cxxopts::value<std::string>())
    ("gpu", "GPU stages: auto | off", cxxopts::value<std::string>())
    ("model", "override llm.model", cxxopts::value<std::string>())
    ("base-url", "override llm.base_url", cxxopts::value<std::string>())
    ("latency-ms", "embedded endpoint: delay each reply by this many ms", cxxopts::value<std::string>())
    ("evaluator-url", "judge on these evald services (comma-separated) instead of in-process",
     cxxopts::value<std::string>())
    ("shard", "run shard i/n of the task x sample grid (one database per shard)", cxxopts::value<std::string>())
    ("coverage-target", "keep sampling tasks until each task x failing-stage cell has N verified repairs",
     cxxopts::value<std::string>())
    ("max-llm-calls", "LLM-call budget of this process (required with --coverage-target)", cxxopts::value<std::string>())
    ("branch", "replies sampled at each repair round; the best continues, the others are kept as siblings "
               "(preference pairs). Each is an LLM call (1: no branching, at most 16)", cxxopts::value<std::string>())
    ("resume", "continue the named experiment from its database")
    ("quiet", "no progress output");
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  auto config_path = option_or_env(args, "config").value_or("configs/demo.json");
  experiment_config cfg = load_experiment_config(config_path);
  if (auto v = option_or_env(args, "name")) cfg.name = *v;
  if (auto v = option_or_env(args, "db")) cfg.db = *v;
  if (auto v = option_or_env(args, "tasks")) cfg.tasks = split_csv(*v);
  if (auto v = option_or_env(args, "samples")) cfg.samples = int_option("samples", *v, 1, k_max_samples);
  if (auto v = option_or_env(args, "rounds")) cfg.rounds = int_option("rounds", *v, 1, k_max_rounds);
  if (auto v = option_or_env(args, "concurrency"))
    cfg.concurrency = int_option("concurrency", *v, 1, k_max_concurrency);
  if (auto v = option_or_env(args, "feedback")) cfg.feedback = parse_feedback_detail(*v);
  if (auto v = option_or_env(args, "stop")) {
    if (*v != "first_pass" && *v != "all_rounds") throw input_error("--stop: expected first_pass or all_rounds");
    cfg.stop = *v == "first_pass" ? stop_policy::first_pass : stop_policy::all_rounds;
  }
  if (auto v = option_or_env(args, "history")) {
    if (*v != "all" && *v != "last_k") throw input_error("--history: expected all or last_k");
    cfg.history = *v == "all" ? history_policy::all : history_policy::last_k;
  }
  if (auto v = option_or_env(args, "history-k")) cfg.history_k = int_option("history-k", *v, 0, k_max_rounds);
  if (auto v = option_or_env(args, "max-context-tokens"))
    cfg.max_context_tokens = int_option("max-context-tokens", *v, 0, 100000000);
  if (auto v = option_or_env(args, "gpu")) cfg.gpu = *v;
  if (auto v = option_or_env(args, "model")) cfg.llm.model = *v;
  if (auto v = option_or_env(args, "base-url")) cfg.llm.base_url = *v;
  if (auto v = option_or_env(args, "latency-ms")) cfg.endpoint_latency_ms = number_option("latency-ms", *v);
  if (auto v = option_or_env(args, "evaluator-url")) cfg.evaluator_urls = split_csv(*v);
  if (auto v = option_or_env(args, "coverage-target")) cfg.coverage_target = int_option("coverage-target", *v, 0, 1000000);
  if (auto v = option_or_env(args, "max-llm-calls")) cfg.max_llm_calls = int_option("max-llm-calls", *v, 0, 1000000000);
  if (auto v = option_or_env(args, "branch")) cfg.branch = int_option("branch", *v, 1, k_max_branch);
  if (auto v = option_or_env(args, "shard")) {
    auto slash = v->find('/');
    if (slash == std::string::npos) throw input_error("--shard: expected i/n, e.g. 0/8");
    cfg.shard_index = int_option("shard", v->substr(0, slash), 0, k_max_shards - 1);
    cfg.shard_count = int_option("shard", v->substr(slash + 1), 1, k_max_shards);
  }
  const bool resume = flag_or_env(args, "resume");
  const bool quiet = flag_or_env(args, "quiet");

  // Checked before the database is created: a bad count or a wrong path must
  // not leave an experiment row or an empty database behind.
  if (!resume) validate_experiment_config(cfg);
  check_config_paths(cfg);
  auto store = run_store::open(cfg.db);
  if (resume) {
    // The stored config wins for everything that shapes the data; only
    // concurrency and the endpoint's address may differ on a resume.
    auto exp = store->find_experiment(cfg.name);
    if (!exp) throw input_error("experiment '" + cfg.name + "' is not in " + cfg.db + ": nothing to resume");
    int concurrency = cfg.concurrency;
    auto base_url = cfg.llm.base_url;
    auto evaluator_urls = cfg.evaluator_urls;
    auto stored = parse_experiment_config(exp->config, cfg.db + " (stored config of " + cfg.name + ")");
    cfg = stored;
    cfg.concurrency = concurrency;
    if (cfg.llm.kind != provider_kind::embedded) cfg.llm.base_url = base_url;
    // The services' addresses may change between runs; their evaluator version is checked on connect.
    if (!evaluator_urls.empty()) cfg.evaluator_urls = evaluator_urls;
  }
  validate_experiment_config(cfg);
  if (!resume && !option_or_env(args, "name")) {
    // A name from the config file that is taken: run as name-2, name-3, ...
    // so the default command works again; an explicit --name must be free.
    std::string base = cfg.name;
    for (int n = 2; store->find_experiment(cfg.name); ++n) cfg.name = base + "-" + std::to_string(n);
    if (cfg.name != base && !quiet)
      std::fprintf(stderr, "experiment %s exists in %s; this run is %s\n", base.c_str(), cfg.db.c_str(), cfg.name.c_str());
  }

  auto all_tasks = load_task_dir(cfg.tasks_dir);
  std::vector<task> tasks;
  if (cfg.tasks.empty()) {
    tasks = all_tasks;
  } else {
    for (const auto& id : cfg.tasks) {
      auto it = std::find_if(all_tasks.begin(), all_tasks.end(), [&](const task& t) { return t.id == id; });
      if (it == all_tasks.end()) throw input_error("unknown task '" + id + "' (see `ptxbench tasks list`)");
      tasks.push_back(*it);
    }
  }
  prompt_library prompts(cfg.prompts_dir);

  std::unique_ptr<embedded_endpoint> endpoint;
  std::unique_ptr<provider> llm;
  if (cfg.llm.kind == provider_kind::embedded) {
    auto script = load_endpoint_script(cfg.endpoint_script);
    if (cfg.endpoint_latency_ms >= 0) script.latency_ms = cfg.endpoint_latency_ms;
    endpoint = std::make_unique<embedded_endpoint>(script);
    provider_config pc = cfg.llm;
    pc.base_url = endpoint->base_url();
    if (pc.model.empty()) pc.model = "embedded-script";
    llm = make_http_provider(pc);
    if (!quiet) std::fprintf(stderr, "embedded endpoint at %s (%s)\n", pc.base_url.c_str(), cfg.endpoint_script.c_str());
  } else if (cfg.llm.kind == provider_kind::replay) {
    llm = make_db_replay_provider(cfg.llm);
  } else {
    llm = make_http_provider(cfg.llm);
  }

  // The teacher endpoint, when the config has one: embedded (its own script) or HTTP.
  std::unique_ptr<embedded_endpoint> teacher_endpoint;
  std::unique_ptr<provider> teacher;
  if (cfg.teacher) {
    provider_config pc = cfg.teacher->llm;
    if (pc.kind == provider_kind::embedded) {
      teacher_endpoint = std::make_unique<embedded_endpoint>(load_endpoint_script(cfg.teacher->endpoint_script));
      pc.base_url = teacher_endpoint->base_url();
      if (pc.model.empty()) pc.model = "embedded-teacher";
    }
    teacher = make_http_provider(pc);
    if (!quiet)
      std::fprintf(stderr, "teacher %s writes repair rounds after %d student failures\n", teacher->describe().c_str(),
                   cfg.teacher->after_failures);
  }

  std::unique_ptr<evaluator> eval;
  if (cfg.evaluator_urls.empty()) {
    local_evaluator_options eo;
    eo.gpu_mode = cfg.gpu;
    eval = make_local_evaluator(eo);
  } else {
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
    eval = make_remote_evaluator(ro);
  }
  if (!quiet)
    std::fprintf(stderr, "experiment %s -> %s | %zu tasks x %d samples x %d rounds%s | evaluator %s, GPU: %s\n",
                 cfg.name.c_str(), cfg.db.c_str(), tasks.size(), cfg.samples, cfg.rounds,
                 cfg.branch > 1 ? (", " + std::to_string(cfg.branch) + " replies per repair round").c_str() : "",
                 eval->version().c_str(), eval->gpu_description().c_str());

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  terminal_progress progress(stderr, stderr_is_tty(), quiet);
  orchestrator orch(cfg, tasks, *llm, *eval, *store, prompts, progress);
  orch.set_teacher(teacher.get());
  auto summary = orch.run(resume);

  std::printf("%s", format_funnel(experiment_funnel(*store, summary.experiment_id, true),
                                  "Stage funnel, every candidate:").c_str());
  std::printf("%s", format_funnel(experiment_funnel(*store, summary.experiment_id, false),
                                  "Stage funnel, final candidate of each trajectory:").c_str());
  std::printf("experiment %s: %d trajectories, %d completed, %d passed, %d incomplete; %d LLM calls (%d failed "
              "attempts); %.1f s; database %s\n",
              cfg.name.c_str(), summary.trajectories, summary.completed, summary.passed, summary.incomplete,
              summary.turns_requested, summary.llm_failures, summary.wall_s, cfg.db.c_str());
  if (cfg.coverage_target > 0) {
    std::printf("%s", format_repair_coverage(count_repairs(*store, summary.experiment_id, tasks), cfg.coverage_target)
                          .c_str());
    std::printf("coverage: %d extra waves of samples; %d trajectories stopped by the LLM-call budget (%d calls)\n",
                summary.coverage_waves, summary.budget_stopped, cfg.max_llm_calls);
  }
  if (!summary.evaluator_unavailable.empty()) {
    std::printf("stopped: %s\nthe candidates not judged are kept; when the evaluation services are back, continue "
                "with `ptxbench run --config %s --name %s --db %s --resume`\n",
                summary.evaluator_unavailable.c_str(), config_path.c_str(), cfg.name.c_str(), cfg.db.c_str());
    return exit_code::infrastructure;
  }
  if (orchestrator::stop_requested()) {
    std::printf("interrupted: continue with `ptxbench run --config %s --name %s --db %s --resume`\n",
                config_path.c_str(), cfg.name.c_str(), cfg.db.c_str());
    return exit_code::interrupted;
  }
  // 1 when the job found failures: an incomplete trajectory, or no trajectory
  // with a candidate that failed no stage (stages not run are no failure, so
  // a run without a GPU whose kernels pass every stage that ran exits 0).
  const int sound = trajectories_without_failure(*store, summary.experiment_id);
  if (summary.incomplete > 0 || sound == 0) {
    std::printf("exit 1: %s\n", summary.incomplete > 0 ? "some trajectories are incomplete"
                                                      : "no trajectory has a candidate that failed no stage");
    return exit_code::failures;
  }
  return exit_code::ok;
}

}  // namespace ptxbench::cli
