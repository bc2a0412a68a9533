// ptxbench replay: re-evaluate every logged candidate of an experiment with
// today's evaluator into a new database, and print the verdicts that changed.
#include <cstdio>
#include <map>

#include "agent/cli/commands.hpp"
#include "agent/data/replay.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {

namespace {

int cmd_replay(const option_values& values) {
  const std::string db = values.text("db");
  const std::string experiment = values.text("replay.experiment");
  const std::string out = values.text("out");
  if (!std::filesystem::exists(db)) throw input_error("no run database at " + db);
  if (std::filesystem::exists(out) && std::filesystem::equivalent(db, out))
    throw input_error("--out must be another database than --db");
  data::replay_options options;
  options.experiment = experiment;
  options.new_name = values.text_if("name").value_or("");
  options.run_timing = !values.flag("no-timing");
  const std::string gpu = values.text("gpu");
  options.run_gpu = gpu == "auto";
  options.jobs = static_cast<int>(values.integer("jobs"));

  std::map<std::string, task> tasks;
  for (auto& t : load_task_dir(values.text("tasks-dir"))) tasks[t.id] = std::move(t);
  auto lookup = [&tasks](const std::string& id) -> std::optional<task> {
    auto it = tasks.find(id);
    return it == tasks.end() ? std::nullopt : std::optional<task>(it->second);
  };

  local_evaluator_options eo;
  eo.gpu_mode = gpu;
  eo.worker_path = values.text_if("worker").value_or("");
  auto judge = make_local_evaluator(eo);
  auto source = run_store::open(db, true);
  auto target = run_store::open(out);
  std::printf("replaying '%s' from %s with evaluator %s on %s\n", experiment.c_str(), db.c_str(),
              judge->version().c_str(), judge->gpu_description().c_str());
  std::fflush(stdout);
  auto summary = data::replay_experiment(*source, *target, *judge, lookup, options);
  std::fputs(data::format_replay_summary(summary).c_str(), stdout);
  std::printf("wrote experiment '%s' to %s\n", summary.experiment_name.c_str(), out.c_str());
  return summary.problems.empty() ? exit_code::ok : exit_code::failures;
}

}  // namespace

const command_spec& replay_command() {
  static const command_spec spec{
      "replay", cmd_replay, "re-evaluate logged candidates and show changed verdicts",
      "Re-evaluate every logged candidate of an experiment with today's evaluator into a new database (turns and "
      "candidates copied, each evaluation linked to the one it re-does), and print which verdicts changed and why. "
      "--gpu off judges only format, compile and the static checks.",
      {"db", "replay.experiment", "out", "name", "tasks-dir", "gpu", "no-timing", "jobs", "worker"},
      {"db", "replay.experiment", "out"}};
  return spec;
}

}  // namespace ptxbench::cli
