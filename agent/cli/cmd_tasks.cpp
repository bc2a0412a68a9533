// ptxbench tasks: list, show (with the rendered prompt) or check the tasks.
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "agent/cli/commands.hpp"
#include "agent/prompt/prompt.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/task_check.hpp"

namespace ptxbench::cli {

task find_task(const std::string& id_or_path, const std::string& tasks_dir);

namespace {

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

std::string variant_text(const task& t) {
  std::string out;
  for (const auto& [axis, value] : t.variant) out += (out.empty() ? "" : " ") + axis + "=" + value;
  return out.empty() ? "-" : out;
}

nlohmann::json list_entry(const task& t) {
  return {{"id", t.id},         {"family", t.family}, {"level", t.level},      {"variant", t.variant},
          {"suites", t.suites}, {"arch", t.arch},     {"judged_at", judged_at(t)}, {"runs_on_hopper", t.runs_on_hopper},
          {"target_instructions", t.target_instructions}};
}

int list_tasks(const std::vector<task>& tasks, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : tasks) out.push_back(list_entry(t));
    std::printf("%s\n", out.dump(2).c_str());
    return exit_code::ok;
  }
  std::printf("%-36s %-14s %-5s %-10s %-32s %s\n", "id", "family", "level", "suites", "judged at", "variant");
  for (const auto& t : tasks)
    std::printf("%-36s %-14s %-5s %-10s %-32s %s\n", t.id.c_str(), t.family.c_str(),
                t.level ? std::to_string(t.level).c_str() : "-", joined(t.suites, ",").c_str(), judged_at(t).c_str(),
                variant_text(t).c_str());
  const auto on_gpu = std::count_if(tasks.begin(), tasks.end(), [](const task& t) { return t.runs_on_hopper; });
  std::printf("%zu tasks: %lld judged on the GPU, %lld at the compile and SASS level only\n", tasks.size(),
              (long long)on_gpu, (long long)(tasks.size() - size_t(on_gpu)));
  return exit_code::ok;
}

int check_tasks(const std::vector<task>& tasks, const std::string& dir, const prompt_library& prompts) {
  std::vector<std::string> problems = suite_problems(tasks);
  for (const auto& t : tasks) {
    // The prompt shows the constraints and the public sizes, never a hidden one.
    const std::string text = prompts.system_prompt(t) + prompts.task_prompt(t);
    for (const auto& s : t.sizes)
      if (s.hidden && text.find(describe_size(s)) != std::string::npos)
        problems.push_back(t.id + ": the prompt shows a hidden size");
  }
  for (const auto& p : problems) std::fprintf(stderr, "%s\n", p.c_str());
  if (!problems.empty()) {
    std::fprintf(stderr, "%zu problems in the %zu tasks of %s\n", problems.size(), tasks.size(), dir.c_str());
    return exit_code::failures;
  }
  std::string suites;
  for (const auto& name : suite_names(tasks))
    suites += (suites.empty() ? "" : ", ") + name + " (" + std::to_string(tasks_in_suite(tasks, name).size()) + ")";
  std::printf("%zu tasks in %s are valid, obey their size rules and render with the prompt templates; suites: %s\n",
              tasks.size(), dir.c_str(), suites.c_str());
  return exit_code::ok;
}

void show_task(const task& t) {
  std::printf("%s: %s\nfamily %s, level %d, variant %s, suites %s, arch %s, judged on %s\n\n%s\n\n", t.id.c_str(),
              t.title.c_str(), t.family.c_str(), t.level, variant_text(t).c_str(), joined(t.suites, ",").c_str(),
              t.arch.c_str(), judged_at(t).c_str(), t.statement.c_str());
  std::printf("targets: %s\nflops: %s; baseline: %s; speedup threshold %.2f\nconstraints: %s\n",
              joined(t.target_instructions, ", ").c_str(), t.flops.c_str(), t.baseline.c_str(), t.speedup_threshold,
              t.constraints.empty() ? "-" : t.constraints.c_str());
  for (const auto& s : t.sizes)
    std::printf("  size %s%s\n", size_label(t, s).c_str(), s.timed ? " (timed)" : "");
}

}  // namespace

int cmd_tasks(const option_values& values) {
  const std::string action = values.text("action");
  const std::string dir = values.text("tasks-dir");
  if (action == "list") {
    auto tasks = load_task_dir(dir);
    if (auto suite = values.text_if("suite")) tasks = tasks_in_suite(tasks, *suite);
    return list_tasks(tasks, values.flag("json"));
  }
  if (action == "check") return check_tasks(load_task_dir(dir), dir, prompt_library(values.text("prompts-dir")));
  if (action == "show") {
    if (!values.has("id")) throw input_error("tasks show needs a task id");
    task t = find_task(values.text("id"), dir);
    if (values.flag("json")) {
      std::printf("%s\n", task_to_json(t).dump(2).c_str());
    } else if (values.flag("prompt")) {
      prompt_library prompts(values.text("prompts-dir"));
      std::printf("=== system ===\n%s\n=== user ===\n%s\n", prompts.system_prompt(t).c_str(),
                  prompts.task_prompt(t).c_str());
    } else {
      show_task(t);
    }
    return exit_code::ok;
  }
  throw std::logic_error("tasks: action '" + action + "' is in the option table but not here");
}


const command_spec& tasks_command() {
  static const command_spec spec{"tasks", cmd_tasks, "list, show or check the tasks",
                                 "List, show or check the tasks.\n  ptxbench tasks list [--suite NAME] [--json]\n"
                                 "  ptxbench tasks show ID [--prompt | --json]\n  ptxbench tasks check",
                                 {"action", "id", "tasks-dir", "prompts-dir", "suite", "prompt", "json"}};
  return spec;
}

}  // namespace ptxbench::cli
