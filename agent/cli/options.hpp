#pragma once
// Small helpers shared by the subcommands: option values with environment
// fallbacks (PTXBENCH_<OPTION>, e.g. --rounds <- PTXBENCH_ROUNDS), the exit
// codes, and error printing.
#include <cstdint>
#include <cxxopts.hpp>
#include <optional>
#include <string>

namespace ptxbench::cli {

enum exit_code : int { ok = 0, failures = 1, usage = 2, infrastructure = 3, interrupted = 130 };

// The option's value from the command line, else from PTXBENCH_<NAME>, else nullopt.
std::optional<std::string> option_or_env(const cxxopts::ParseResult& r, const std::string& name);
std::string env_name(const std::string& option);
// A boolean flag: given on the command line, else PTXBENCH_<NAME> set to
// 1/true/yes/on (0/false/no/off or empty: off). Any other value is an
// input_error naming the variable, so a typo never silently means "off".
bool flag_or_env(const cxxopts::ParseResult& r, const std::string& name);
// Parses argv with `opts`; prints help and returns false when --help was given
// (exit code in *code), throws cxxopts exceptions on bad usage.
bool parse_or_help(cxxopts::Options& opts, int argc, char** argv, cxxopts::ParseResult* out, int* code);
void print_error(const std::string& what);
// `text` as an integer in [lo, hi], or input_error "--<option>: ..." (not a
// number, trailing characters, out of range): std::stoi threw out_of_range,
// which ended as an infrastructure error.
int int_option(const std::string& option, const std::string& text, int64_t lo, int64_t hi);
// `text` as a finite number, or input_error naming the option.
double number_option(const std::string& option, const std::string& text);
bool stderr_is_tty();

}  // namespace ptxbench::cli
