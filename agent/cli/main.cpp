// ptxbench: measure and improve how well language models write
// architecture-specific PTX. The subcommands and their options are tables
// (commands.hpp, option_table.hpp); this file dispatches and maps exceptions
// to exit codes.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "agent/cli/commands.hpp"
#include "agent/cli/option_help.hpp"
#include "agent/store/merge.hpp"
#include "agent/store/store.hpp"
#include "evaluator/common/json_path.hpp"
#include "ptxbench/version.hpp"

namespace {

using namespace ptxbench::cli;

// The one place where a command's exceptions become exit codes: bad usage or
// input (the message names the option, file or JSON path) is 2, anything else
// that ended the command (SQLite, HTTP transport, CUDA toolkit, a full disk) is 3.
int run_guarded(const command_spec& c, int argc, char** argv) {
  try {
    option_values values = read_command_options(c, argc, argv);
    if (values.help_requested) {
      std::fputs(command_help(c).c_str(), stdout);
      return exit_code::ok;
    }
    return c.run(values);
  } catch (const ptxbench::input_error& e) {
    print_error(e.what());
    return exit_code::usage;
  } catch (const ptxbench::not_a_run_database& e) {
    print_error(e.what());
    return exit_code::usage;
  } catch (const ptxbench::merge_error& e) {
    print_error(e.what());
    return exit_code::usage;
  } catch (const std::exception& e) {
    print_error(e.what());
    return exit_code::infrastructure;
  }
}

// `ptxbench help [COMMAND | options | synopsis]`: options and synopsis are
// the Markdown reference (docs/options.md) and README.md's command block.
int help(int argc, char** argv) {
  const std::string topic = argc > 2 ? argv[2] : "";
  if (topic.empty()) {
    std::fputs(program_help().c_str(), stdout);
  } else if (topic == "options") {
    std::fputs(options_reference().c_str(), stdout);
  } else if (topic == "synopsis") {
    std::fputs(commands_synopsis().c_str(), stdout);
  } else if (const command_spec* c = find_command(topic)) {
    std::fputs(command_help(*c).c_str(), stdout);
  } else {
    print_error("help: no command or topic '" + topic + "' (a command, options or synopsis)");
    return exit_code::usage;
  }
  return exit_code::ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(program_help().c_str(), stderr);
    return exit_code::usage;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help"))
    return help(argc, argv);
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("ptxbench %s (evaluator %s)\n", ptxbench::project_version, ptxbench::evaluator_version);
    return exit_code::ok;
  }
  if (const command_spec* c = find_command(argv[1])) return run_guarded(*c, argc - 1, argv + 1);
  std::fprintf(stderr, "ptxbench: unknown command '%s'\n\n", argv[1]);
  std::fputs(program_help().c_str(), stderr);
  return exit_code::usage;
}
