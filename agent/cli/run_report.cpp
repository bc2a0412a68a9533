#include "agent/cli/run_report.hpp"

#include <cstdio>

#include "agent/cli/commands.hpp"
#include "agent/loop/coverage.hpp"

namespace ptxbench::cli {
namespace {

std::string resume_command(const experiment_config& cfg, const std::string& config_path) {
  return "`ptxbench run --config " + config_path + " --name " + cfg.name + " --db " + cfg.db + " --resume`";
}

void print_figures(const experiment_config& cfg, run_store& store, const run_summary& summary,
                   const std::vector<task>& tasks) {
  std::printf("%s", format_funnel(experiment_funnel(store, summary.experiment_id, true),
                                  "Stage funnel, every candidate:").c_str());
  std::printf("%s", format_funnel(experiment_funnel(store, summary.experiment_id, false),
                                  "Stage funnel, final candidate of each trajectory:").c_str());
  std::printf("experiment %s: %d trajectories, %d completed, %d passed, %d incomplete; %d LLM calls (%d failed "
              "attempts); %.1f s; database %s\n",
              cfg.name.c_str(), summary.trajectories, summary.completed, summary.passed, summary.incomplete,
              summary.turns_requested, summary.llm_failures, summary.wall_s, cfg.db.c_str());
  if (cfg.coverage_target > 0) {
    std::printf("%s", format_repair_coverage(count_repairs(store, summary.experiment_id, tasks), cfg.coverage_target)
                          .c_str());
    std::printf("coverage: %d extra waves of samples; %d trajectories stopped by the LLM-call budget (%d calls)\n",
                summary.coverage_waves, summary.budget_stopped, cfg.max_llm_calls);
  }
}

}  // namespace

int report_run(const experiment_config& cfg, const std::string& config_path, run_store& store,
               const run_summary& summary, const std::vector<task>& tasks) {
  if (!summary.store_failure.empty()) {
    // The database may be unreadable too (a full disk): no figures, the cause.
    print_error("the run stopped: " + summary.store_failure + "\nwhat was stored is complete; when the database " +
                "can be written again (free space), continue with " + resume_command(cfg, config_path));
    return exit_code::infrastructure;
  }
  print_figures(cfg, store, summary, tasks);
  if (!summary.evaluator_unavailable.empty()) {
    print_error("stopped: " + summary.evaluator_unavailable + "\nthe candidates not judged are kept; when the " +
                "evaluation services are back, continue with " + resume_command(cfg, config_path));
    return exit_code::infrastructure;
  }
  if (orchestrator::stop_requested()) {
    std::printf("interrupted: continue with %s\n", resume_command(cfg, config_path).c_str());
    return exit_code::interrupted;
  }
  // 1 when the job found failures: an incomplete trajectory, or no trajectory
  // with a candidate that failed no stage (stages not run are no failure, so
  // a run without a GPU whose kernels pass every stage that ran exits 0).
  const int sound = trajectories_without_failure(store, summary.experiment_id);
  if (summary.incomplete > 0 || sound == 0) {
    std::printf("exit 1: %s\n", summary.incomplete > 0 ? "some trajectories are incomplete"
                                                      : "no trajectory has a candidate that failed no stage");
    return exit_code::failures;
  }
  return exit_code::ok;
}

}  // namespace ptxbench::cli
