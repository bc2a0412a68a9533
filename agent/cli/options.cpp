#include "agent/cli/options.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "evaluator/api/json_path.hpp"

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

bool flag_or_env(const cxxopts::ParseResult& r, const std::string& name) {
  if (r.count(name)) return true;
  const std::string var = env_name(name);
  const char* v = std::getenv(var.c_str());
  if (!v) return false;
  std::string value;
  for (const char* c = v; *c; ++c) value += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value.empty() || value == "0" || value == "false" || value == "no" || value == "off") return false;
  throw input_error(var + "='" + v + "': expected 1, true, yes, on, 0, false, no or off");
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
