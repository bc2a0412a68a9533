#pragma once
// Help and reference text, written from the option and command tables: what
// `--help` prints, the command synopsis in README.md and docs/options.md. A
// test compares the two files with these functions' output.
#include <string>

#include "agent/cli/commands.hpp"

namespace ptxbench::cli {

// `ptxbench --help`: the commands, the exit codes.
std::string program_help();
// `ptxbench <command> --help`: the description, then every option with its
// variable, config key, type and bounds, and default.
std::string command_help(const command_spec& c);
// One synopsis line per command (wrapped), as README.md's "Commands" block holds it.
std::string commands_synopsis();
// docs/options.md: every command's options as Markdown tables.
std::string options_reference();

}  // namespace ptxbench::cli
