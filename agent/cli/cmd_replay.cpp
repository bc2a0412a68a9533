// ptxbench replay: re-evaluate every logged candidate of an experiment with
// today's evaluator into a new database, and print the verdicts that changed.
#include <cstdio>
#include <map>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/data/replay.hpp"
#include "evaluator/api/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {

int cmd_replay(int argc, char** argv) {
  cxxopts::Options opts(argv[0],
                        "Re-evaluate every logged candidate of an experiment with today's evaluator into a new "
                        "database (turns and candidates copied, each evaluation linked to the one it re-does), "
                        "and print which verdicts changed and why.");
  opts.add_options()
    ("db", "run database holding the experiment", cxxopts::value<std::string>())
    ("experiment", "experiment to replay", cxxopts::value<std::string>())
    ("out", "database to write the replay into (created if missing)", cxxopts::value<std::string>())
    ("name", "experiment name in --out (default <experiment>-replay)", cxxopts::value<std::string>())
    ("tasks-dir", "folder of task files (default tasks)", cxxopts::value<std::string>())
    ("gpu", "auto | off: off judges only format, compile and static checks (default auto)",
     cxxopts::value<std::string>())
    ("no-timing", "skip the performance stage")
    ("jobs", "evaluations in flight at once (default 4)", cxxopts::value<std::string>())
    ("worker", "ptxbench-worker executable (default: next to this binary)", cxxopts::value<std::string>());
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  auto db = option_or_env(args, "db");
  auto experiment = option_or_env(args, "experiment");
  auto out = option_or_env(args, "out");
  if (!db || !experiment || !out) throw input_error("--db, --experiment and --out are required");
  if (!std::filesystem::exists(*db)) throw input_error("no run database at " + *db);
  if (std::filesystem::exists(*out) && std::filesystem::equivalent(*db, *out)) {
    throw input_error("--out must be another database than --db");
  }
  data::replay_options options;
  options.experiment = *experiment;
  options.new_name = option_or_env(args, "name").value_or("");
  options.run_timing = !flag_or_env(args, "no-timing");
  std::string gpu = option_or_env(args, "gpu").value_or("auto");
  if (gpu != "auto" && gpu != "off") throw input_error("--gpu must be auto or off");
  options.run_gpu = gpu == "auto";
  options.jobs = int_option("jobs", option_or_env(args, "jobs").value_or("4"), 1, 1024);
  if (options.jobs < 1) throw input_error("--jobs must be at least 1");

  std::map<std::string, task> tasks;
  for (auto& t : load_task_dir(option_or_env(args, "tasks-dir").value_or("tasks"))) tasks[t.id] = std::move(t);
  auto lookup = [&tasks](const std::string& id) -> std::optional<task> {
    auto it = tasks.find(id);
    return it == tasks.end() ? std::nullopt : std::optional<task>(it->second);
  };

  local_evaluator_options eo;
  eo.gpu_mode = gpu;
  eo.worker_path = option_or_env(args, "worker").value_or("");
  auto judge = make_local_evaluator(eo);
  auto source = run_store::open(*db, true);
  auto target = run_store::open(*out);
  std::printf("replaying '%s' from %s with evaluator %s on %s\n", experiment->c_str(), db->c_str(),
              judge->version().c_str(), judge->gpu_description().c_str());
  std::fflush(stdout);
  auto summary = data::replay_experiment(*source, *target, *judge, lookup, options);
  std::fputs(data::format_replay_summary(summary).c_str(), stdout);
  std::printf("wrote experiment '%s' to %s\n", summary.experiment_name.c_str(), out->c_str());
  return summary.problems.empty() ? exit_code::ok : exit_code::failures;
}

}  // namespace ptxbench::cli
