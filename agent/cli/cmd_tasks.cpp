// ptxbench tasks: list, show (with the rendered prompt) or check the tasks.
#include <cstdio>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/prompt/prompt.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::cli {

task find_task(const std::string& id_or_path, const std::string& tasks_dir);

int cmd_tasks(int argc, char** argv) {
  cxxopts::Options opts(argv[0], "List, show or check the tasks.\n  ptxbench tasks list\n  ptxbench tasks show ID [--prompt]\n  ptxbench tasks check");
  opts.add_options()
    ("action", "list | show | check", cxxopts::value<std::string>()->default_value("list"))
    ("id", "task id (show)", cxxopts::value<std::string>())
    ("tasks-dir", "folder of task files", cxxopts::value<std::string>()->default_value("tasks"))
    ("prompts-dir", "folder of prompt templates", cxxopts::value<std::string>()->default_value("prompts"))
    ("prompt", "show: print the system and task prompts a model receives")
    ("json", "show: print the task as JSON");
  opts.parse_positional({"action", "id"});
  opts.positional_help("list | show ID | check");
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  std::string action = args["action"].as<std::string>();
  std::string dir = option_or_env(args, "tasks-dir").value_or("tasks");
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
    prompt_library prompts(option_or_env(args, "prompts-dir").value_or("prompts"));
    for (const auto& t : tasks) {
      prompts.system_prompt(t);
      prompts.task_prompt(t);
    }
    std::printf("%zu tasks in %s are valid and render with the prompt templates\n", tasks.size(), dir.c_str());
    return exit_code::ok;
  }
  if (action == "show") {
    if (!args.count("id")) throw input_error("tasks show needs a task id");
    task t = find_task(args["id"].as<std::string>(), dir);
    if (flag_or_env(args, "json")) {
      std::printf("%s\n", task_to_json(t).dump(2).c_str());
    } else if (flag_or_env(args, "prompt")) {
      prompt_library prompts(option_or_env(args, "prompts-dir").value_or("prompts"));
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
  throw input_error("unknown action '" + action + "' (list, show, check)");
}

}  // namespace ptxbench::cli
