#include "agent/cli/options.hpp"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
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

int int_option(const std::string& option, const std::string& text, int64_t lo, int64_t hi) {
  int64_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto parsed = std::from_chars(begin, end, value);
  const std::string range = " (" + std::to_string(lo) + " to " + std::to_string(hi) + ")";
  if (parsed.ec == std::errc::result_out_of_range) throw input_error("--" + option + ": " + text + " is out of range" + range);
  if (parsed.ec != std::errc() || parsed.ptr != end) throw input_error("--" + option + ": not an integer: '" + text + "'");
  if (value < lo || value > hi) throw input_error("--" + option + ": " + text + " is out of range" + range);
  return static_cast<int>(value);
}

double number_option(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
    throw input_error("--" + option + ": not a number: '" + text + "'");
  return value;
}

void print_error(const std::string& what) { std::fprintf(stderr, "ptxbench: error: %s\n", what.c_str()); }

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

}  // namespace ptxbench::cli
