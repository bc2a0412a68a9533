#include "agent/cli/options.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace ptxbench::cli {

std::string env_name(const std::string& option) {
  std::string n = "PTXBENCH_";
  for (char c : option) n += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

std::optional<std::string> option_or_env(const cxxopts::ParseResult& r, const std::string& name) {
  if (r.count(name)) return r[name].as<std::string>();
  if (const char* v = std::getenv(env_name(name).c_str()); v && *v) return std::string(v);
  return std::nullopt;
}

bool parse_or_help(cxxopts::Options& opts, int argc, char** argv, cxxopts::ParseResult* out, int* code) {
  opts.add_options()("h,help", "Show this help");
  *out = opts.parse(argc, argv);
  if (out->count("help")) {
    std::cout << opts.help() << "\nEvery option can also be set by an environment variable PTXBENCH_<OPTION> "
                 "(e.g. --rounds: PTXBENCH_ROUNDS); the command line wins.\n";
    *code = exit_code::ok;
    return false;
  }
  return true;
}

void print_error(const std::string& what) { std::fprintf(stderr, "ptxbench: error: %s\n", what.c_str()); }

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

}  // namespace ptxbench::cli
