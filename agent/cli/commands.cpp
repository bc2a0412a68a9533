#include "agent/cli/commands.hpp"

#include <unistd.h>

#include <cstdio>

#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {

const std::vector<const command_spec*>& all_commands() {
  static const std::vector<const command_spec*> commands = {
      &run_command(),    &eval_command(),  &tasks_command(), &export_command(), &replay_command(),
      &report_command(), &serve_command(), &merge_command(), &evald_command(),  &mutate_command()};
  return commands;
}

const command_spec* find_command(const std::string& name) {
  for (const command_spec* c : all_commands())
    if (c->name == name) return c;
  return nullptr;
}

option_values read_command_options(const command_spec& c, int argc, const char* const* argv) {
  option_values values = read_options("ptxbench " + c.name, c.options, argc, argv);
  if (values.help_requested) return values;
  for (const auto& id : c.required) {
    if (values.has(id)) continue;
    const option& o = find_option(id);
    throw input_error((o.positional ? o.value_name : "--" + o.flag) + " is required" +
                      (o.env.empty() ? "" : " (or " + o.env + ")") + ": " + o.help);
  }
  return values;
}

void print_error(const std::string& what) { std::fprintf(stderr, "ptxbench: error: %s\n", what.c_str()); }

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

}  // namespace ptxbench::cli
