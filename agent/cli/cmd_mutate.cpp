// ptxbench mutate: correction data from verified solutions. Each solution is
// broken by the operators of agent/mutate (README.md there has the
// catalogue), every mutant is judged by the evaluator, and those whose verdict
// is the stage their operator aims at are stored as repair trajectories.
#include <cstdio>
#include <optional>
#include <random>

#include "agent/cli/commands.hpp"
#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/experiment_config.hpp"
#include "agent/mutate/mutate_run.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {

namespace {

int cmd_mutate(const option_values& values) {
  const std::string db = values.text("db");
  const bool all = values.flag("all");
  const std::vector<std::string> task_list = values.list("task");
  if (all == !task_list.empty()) throw input_error("give exactly one of --all and --task T");
  mutate::mutate_options o;
  o.per_solution = static_cast<int>(values.integer("per-solution"));
  o.seed = static_cast<uint64_t>(values.integer("seed"));
  o.operators = values.list("operators");
  o.experiment_name = values.text_if("name").value_or("mutate-seed" + std::to_string(o.seed));
  if (auto v = values.text_if("feedback")) o.feedback = parse_feedback_detail(*v);
  const std::string gpu = values.text("gpu");
  // The mutants are judged as a run of this config judges its candidates.
  std::optional<experiment_config> cfg;
  if (auto config = values.text_if("config")) {
    cfg = load_experiment_config(*config);
    o.judging = judge_settings_from_config(experiment_config_to_json(*cfg));
  }
  o.judging.run_gpu = gpu != "off";
  // Feedback at the profile level profiles the performance mutants too, and
  // the localisation table judges the profile on them.
  if (o.feedback == feedback_detail::profile) o.judging.profile = true;
  const std::string tasks_dir = values.text("tasks-dir");
  solution_roots roots = default_solution_roots(tasks_dir);
  if (auto v = values.text_if("solutions")) roots.checked_in = *v;
  if (auto v = values.text_if("generated-solutions")) roots.generated = *v;
  prompt_library prompts(values.text("prompts-dir"));
  auto solutions = mutate::load_solutions(load_task_dir(tasks_dir), roots, task_list);
  if (solutions.empty())
    throw input_error("no task in " + tasks_dir + " has a solution in " + roots.checked_in.string() + " or " +
                      roots.generated.string());

  std::unique_ptr<embedded_endpoint> teacher_endpoint;
  std::unique_ptr<provider> teacher;
  if (values.flag("rationale")) {
    if (!cfg) throw input_error("--rationale needs --config with a \"teacher\" endpoint");
    if (!cfg->teacher) throw input_error(*values.text_if("config") + ": no \"teacher\" endpoint for --rationale");
    provider_config pc = cfg->teacher->llm;
    if (pc.kind == provider_kind::embedded) {
      teacher_endpoint = std::make_unique<embedded_endpoint>(load_endpoint_script(cfg->teacher->endpoint_script));
      pc.base_url = teacher_endpoint->base_url();
      if (pc.model.empty()) pc.model = "embedded-teacher";
    }
    teacher = make_http_provider(pc);
    o.rationale_teacher = teacher.get();
    o.rationale_model = pc.model;
  }

  local_evaluator_options eo;
  eo.gpu_mode = gpu;
  auto eval = make_local_evaluator(eo);
  auto store = run_store::open(db);
  std::fprintf(stderr, "mutate: %zu solutions x %d mutants, seed %llu -> %s (experiment %s) | GPU: %s\n",
               solutions.size(), o.per_solution, static_cast<unsigned long long>(o.seed), db.c_str(),
               o.experiment_name.c_str(), eval->gpu_description().c_str());
  const bool quiet = values.flag("quiet");
  auto summary = mutate::run_mutation(solutions, *eval, *store, prompts, o, [&](const mutate::mutant_record& m) {
    if (quiet) return;
    std::fprintf(stderr, "  %-32s %-24s %-11s %s\n", m.task_id.c_str(), m.op.c_str(), to_string(m.outcome),
                 m.change.c_str());
    // What the evaluator said, where the mutant was not kept: why it missed its stage.
    if (m.outcome != mutate::mutant_outcome::kept)
      std::fprintf(stderr, "  %-32s   -> %s: %.300s\n", "", m.verdict.c_str(), m.headline.c_str());
  });
  std::printf("%s", mutate::format_mutation_table(summary).c_str());
  std::printf("%s", mutate::format_localisation_table(summary).c_str());
  std::printf("kept %d mutants as trajectories of experiment %s in %s\n", summary.kept(), o.experiment_name.c_str(),
              db.c_str());
  return exit_code::ok;
}

}  // namespace

const command_spec& mutate_command() {
  static const command_spec spec{
      "mutate", cmd_mutate, "correction data: break verified solutions, judge, keep the aimed verdicts",
      "Break verified solutions with mutation operators, judge every mutant, and store those rejected at the stage "
      "their operator aims at as repair trajectories (round 0: the mutant and its feedback, round 1: the solution; "
      "source \"mutation\"). Without a GPU only format, compile and the static instruction check run; mutants aimed "
      "at later stages are reported as not run and not kept.",
      {"all", "task", "per-solution", "seed", "operators", "db", "name", "tasks-dir", "solutions", "generated-solutions", "prompts-dir",
       "feedback", "gpu", "rationale", "config", "quiet"},
      {"db"}};
  return spec;
}

}  // namespace ptxbench::cli
