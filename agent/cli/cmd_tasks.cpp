// ptxbench tasks: list, show (with the rendered prompt) or check the tasks.
#include <cstdio>
#include <stdexcept>

#include "agent/cli/commands.hpp"
#include "agent/prompt/prompt.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::cli {

task find_task(const std::string& id_or_path, const std::string& tasks_dir);

namespace {

int cmd_tasks(const option_values& values) {
  const std::string action = values.text("action");
  const std::string dir = values.text("tasks-dir");
  if (action == "list") {
    auto tasks = load_task_dir(dir);
    std::printf("%-32s %-14s %-8s %-50s %s\n", "id", "family", "arch", "target instructions", "runs here");
    for (const auto& t : tasks) {
      std::string targets;
      for (const auto& x : t.target_instructions) targets += (targets.empty() ? "" : ", ") + x;
      std::printf("%-32s %-14s %-8s %-50s %s\n", t.id.c_str(), t.family.c_str(), t.arch.c_str(), targets.c_str(),
                  t.runs_on_hopper ? "yes" : "compile + static only");
    }
    return exit_code::ok;
  }
  if (action == "check") {
    auto tasks = load_task_dir(dir);
    prompt_library prompts(values.text("prompts-dir"));
    for (const auto& t : tasks) {
      prompts.system_prompt(t);
      prompts.task_prompt(t);
    }
    std::printf("%zu tasks in %s are valid and render with the prompt templates\n", tasks.size(), dir.c_str());
    return exit_code::ok;
  }
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
      std::printf("%s: %s\nfamily %s, arch %s%s\n\n%s\n\nflops: %s; baseline: %s; speedup threshold %.2f\n",
                  t.id.c_str(), t.title.c_str(), t.family.c_str(), t.arch.c_str(),
                  t.runs_on_hopper ? "" : " (compile and static checks only on this Hopper GPU)", t.statement.c_str(),
                  t.flops.c_str(), t.baseline.c_str(), t.speedup_threshold);
      for (const auto& s : t.sizes) std::printf("  size %s%s\n", describe_size(s).c_str(), s.timed ? " (timed)" : "");
    }
    return exit_code::ok;
  }
  throw std::logic_error("tasks: action '" + action + "' is in the option table but not here");
}

}  // namespace

const command_spec& tasks_command() {
  static const command_spec spec{"tasks", cmd_tasks, "list, show or check the tasks",
                                 "List, show or check the tasks.\n  ptxbench tasks list\n  ptxbench tasks show ID "
                                 "[--prompt | --json]\n  ptxbench tasks check",
                                 {"action", "id", "tasks-dir", "prompts-dir", "prompt", "json"}};
  return spec;
}

}  // namespace ptxbench::cli
