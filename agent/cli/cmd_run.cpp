// ptxbench run: the generate -> evaluate -> repair loop.
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "agent/cli/commands.hpp"
#include "agent/cli/run_config.hpp"
#include "agent/cli/run_parts.hpp"
#include "agent/cli/run_report.hpp"
#include "evaluator/common/json_path.hpp"

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

int cmd_run(const option_values& values) {
  const std::string config_path = values.text_if("config").value_or("configs/demo.json");
  const bool resume = values.flag("resume");
  const bool quiet = values.flag("quiet");
  experiment_config cfg = read_run_config(values, config_path);
  // Checked before the database is created: a wrong path or task id must not
  // leave an experiment row or an empty database behind.
  check_config_paths(cfg);
  if (!resume) select_tasks(cfg);
  auto store = run_store::open(cfg.db);
  if (resume) {
    auto exp = store->find_experiment(cfg.name);
    if (!exp) throw input_error("experiment '" + cfg.name + "' is not in " + cfg.db + ": nothing to resume");
    cfg = resume_config(cfg, *exp, values);
  } else {
    name_new_experiment(cfg, *store, values.has("name"), quiet);
  }
  validate_experiment_config(cfg);
  const std::vector<task> tasks = select_tasks(cfg);
  prompt_library prompts(cfg.prompts_dir);
  run_parts parts = make_run_parts(cfg, quiet);
  if (!quiet)
    std::fprintf(stderr, "experiment %s -> %s | %zu tasks x %d samples x %d rounds%s | evaluator %s, GPU: %s\n",
                 cfg.name.c_str(), cfg.db.c_str(), tasks.size(), cfg.samples, cfg.rounds,
                 cfg.branch > 1 ? (", " + std::to_string(cfg.branch) + " replies per repair round").c_str() : "",
                 parts.eval->version().c_str(), parts.eval->gpu_description().c_str());
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  terminal_progress progress(stderr, stderr_is_tty(), quiet);
  orchestrator orch(cfg, tasks, *parts.llm, *parts.eval, *store, prompts, progress);
  orch.set_teacher(parts.teacher.get());
  const run_summary summary = orch.run(resume);
  return report_run(cfg, config_path, *store, summary, tasks);
}

}  // namespace

const command_spec& run_command() {
  static const command_spec spec{
      "run", cmd_run, "run (or --resume) a generate -> evaluate -> repair experiment",
      "Run (or resume) an experiment: tasks x samples x rounds of generate -> evaluate -> feedback. The config "
      "file gives the experiment; an option given here replaces its config key.",
      {"config", "name", "db", "tasks", "suite", "samples", "rounds", "concurrency", "feedback", "stop", "history", "history-k",
       "max-context-tokens", "gpu", "model", "base-url", "latency-ms", "evaluator-url", "shard", "coverage-target",
       "max-llm-calls", "branch", "resume", "quiet"},
      {},
      true};
  return spec;
}

}  // namespace ptxbench::cli
