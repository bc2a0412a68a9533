// ptxbench mutate: correction data from verified solutions. Each solution is
// broken by the operators of agent/mutate (README.md there has the
// catalogue), every mutant is judged by the evaluator, and those whose verdict
// is the stage their operator aims at are stored as repair trajectories.
#include <cstdio>
#include <random>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/experiment_config.hpp"
#include "agent/mutate/mutate_run.hpp"
#include "evaluator/api/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {
namespace {

std::vector<std::string> csv(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int positive_int(const std::string& option, const std::string& text) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 1) throw input_error("--" + option + ": expected a positive integer, got '" + text + "'");
  return v;
}

}  // namespace

int cmd_mutate(int argc, char** argv) {
  cxxopts::Options opts(argv[0],
                        "Break verified solutions with mutation operators, judge every mutant, and store those "
                        "rejected at the stage their operator aims at as repair trajectories (round 0: the mutant "
                        "and its feedback, round 1: the solution; source \"mutation\"). Without a GPU only format, "
                        "compile and the static instruction check run; mutants aimed at later stages are reported "
                        "as not run and not kept.");
  opts.add_options()
    ("all", "every task that has a verified solution")
    ("task", "only these task ids (comma-separated)", cxxopts::value<std::string>())
    ("per-solution", "mutants judged per solution (default 10)", cxxopts::value<std::string>())
    ("seed", "seed of the operators' choices (default 1)", cxxopts::value<std::string>())
    ("operators", "only these operators (comma-separated)", cxxopts::value<std::string>())
    ("db", "run database", cxxopts::value<std::string>())
    ("name", "experiment name (default mutate-seed<S>)", cxxopts::value<std::string>())
    ("tasks-dir", "folder of task files (default tasks)", cxxopts::value<std::string>())
    ("solutions", "folder of checked-in solutions (default <tasks-dir>/solutions)", cxxopts::value<std::string>())
    ("generated-solutions", "folder of generated solutions (default $PTXBENCH_GENERATED_SOLUTIONS, else "
     "<tasks-dir>/../build/solutions)", cxxopts::value<std::string>())
    ("prompts", "folder of prompt templates (default prompts)", cxxopts::value<std::string>())
    ("feedback", "feedback detail stored with the mutant: none | stage | full (default full)",
     cxxopts::value<std::string>())
    ("gpu", "GPU stages: auto | off (default auto)", cxxopts::value<std::string>())
    ("rationale", "ask the teacher of --config for the reasoning from each kept mutant to its fix")
    ("config", "experiment config whose \"teacher\" endpoint writes the rationales", cxxopts::value<std::string>())
    ("quiet", "no line per mutant");
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  auto db = option_or_env(args, "db");
  if (!db) throw input_error("--db is required");
  const bool all = args.count("all") > 0;
  auto task_list = option_or_env(args, "task");
  if (all == task_list.has_value()) throw input_error("give exactly one of --all and --task T");
  mutate::mutate_options o;
  if (auto v = option_or_env(args, "per-solution")) o.per_solution = positive_int("per-solution", *v);
  if (auto v = option_or_env(args, "seed")) {
    try {
      o.seed = std::stoull(*v);
    } catch (const std::exception&) {
      throw input_error("--seed: not a number: '" + *v + "'");
    }
  }
  if (auto v = option_or_env(args, "operators")) o.operators = csv(*v);
  o.experiment_name = option_or_env(args, "name").value_or("mutate-seed" + std::to_string(o.seed));
  if (auto v = option_or_env(args, "feedback")) o.feedback = parse_feedback_detail(*v);
  const std::string gpu = option_or_env(args, "gpu").value_or("auto");
  if (gpu != "auto" && gpu != "off") throw input_error("--gpu: expected auto or off");
  o.run_gpu = gpu != "off";
  const std::string tasks_dir = option_or_env(args, "tasks-dir").value_or("tasks");
  solution_roots roots = default_solution_roots(tasks_dir);
  if (auto v = option_or_env(args, "solutions")) roots.checked_in = *v;
  if (auto v = option_or_env(args, "generated-solutions")) roots.generated = *v;
  prompt_library prompts(option_or_env(args, "prompts").value_or("prompts"));
  auto solutions = mutate::load_solutions(load_task_dir(tasks_dir), roots,
                                          task_list ? csv(*task_list) : std::vector<std::string>{});
  if (solutions.empty())
    throw input_error("no task in " + tasks_dir + " has a solution in " + roots.checked_in.string() + " or " +
                      roots.generated.string());

  std::unique_ptr<embedded_endpoint> teacher_endpoint;
  std::unique_ptr<provider> teacher;
  if (args.count("rationale")) {
    auto config = option_or_env(args, "config");
    if (!config) throw input_error("--rationale needs --config with a \"teacher\" endpoint");
    auto cfg = load_experiment_config(*config);
    if (!cfg.teacher) throw input_error(*config + ": no \"teacher\" endpoint for --rationale");
    provider_config pc = cfg.teacher->llm;
    if (pc.kind == provider_kind::embedded) {
      teacher_endpoint = std::make_unique<embedded_endpoint>(load_endpoint_script(cfg.teacher->endpoint_script));
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
  auto store = run_store::open(*db);
  std::fprintf(stderr, "mutate: %zu solutions x %d mutants, seed %llu -> %s (experiment %s) | GPU: %s\n",
               solutions.size(), o.per_solution, static_cast<unsigned long long>(o.seed), db->c_str(),
               o.experiment_name.c_str(), eval->gpu_description().c_str());
  const bool quiet = args.count("quiet") > 0;
  auto summary = mutate::run_mutation(solutions, *eval, *store, prompts, o, [&](const mutate::mutant_record& m) {
    if (quiet) return;
    std::fprintf(stderr, "  %-32s %-24s %-11s %s\n", m.task_id.c_str(), m.op.c_str(), to_string(m.outcome),
                 m.change.c_str());
    // What the evaluator said, where the mutant was not kept: why it missed its stage.
    if (m.outcome != mutate::mutant_outcome::kept)
      std::fprintf(stderr, "  %-32s   -> %s: %.300s\n", "", m.verdict.c_str(), m.headline.c_str());
  });
  std::printf("%s", mutate::format_mutation_table(summary).c_str());
  std::printf("kept %d mutants as trajectories of experiment %s in %s\n", summary.kept(), o.experiment_name.c_str(),
              db->c_str());
  return exit_code::ok;
}

}  // namespace ptxbench::cli
