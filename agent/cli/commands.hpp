#pragma once
// The subcommands of the ptxbench executable: each names the options it takes
// (rows of option_table.hpp) and runs on the values read for them. A command
// returns the process exit code:
//   0 success, 1 the job ran but found failures where the command promises none
//   (e.g. `eval` of a candidate that fails), 2 usage or input error, 3 infrastructure error.
#include <string>
#include <vector>

#include "agent/cli/option_reader.hpp"

namespace ptxbench::cli {

enum exit_code : int { ok = 0, failures = 1, usage = 2, infrastructure = 3, interrupted = 130 };

struct command_spec {
  std::string name;
  int (*run)(const option_values&) = nullptr;
  std::string summary;      // one line, in `ptxbench --help`
  std::string description;  // the head of `ptxbench <name> --help`
  std::vector<std::string> options;   // ids of the option table, in the order help lists them
  std::vector<std::string> required;  // those the command cannot run without
  // run: option values may also come from the experiment config (the rows' config keys).
  bool reads_experiment_config = false;
};

const command_spec& run_command();
const command_spec& eval_command();
const command_spec& tasks_command();
const command_spec& export_command();
const command_spec& replay_command();
const command_spec& report_command();
const command_spec& serve_command();
const command_spec& merge_command();
const command_spec& evald_command();
const command_spec& mutate_command();

// Every command, in the order `ptxbench --help` lists them.
const std::vector<const command_spec*>& all_commands();
const command_spec* find_command(const std::string& name);

// Reads the command's options from argv (argv[0] is the program name) and the
// environment, and checks the required ones. Throws input_error.
option_values read_command_options(const command_spec& c, int argc, const char* const* argv);

void print_error(const std::string& what);
bool stderr_is_tty();

}  // namespace ptxbench::cli
