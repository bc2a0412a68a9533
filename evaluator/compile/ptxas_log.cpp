#include "evaluator/compile/ptxas_log.hpp"

#include <regex>
#include <sstream>

#include "evaluator/compile/ptx_text.hpp"

namespace ptxbench {
namespace {

std::vector<std::string> log_lines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const size_t last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

}  // namespace

std::string quote_ptx_lines(const std::string& ptx, int first, int last, int mark) {
  const std::vector<std::string_view> lines = ptx_text::split_lines(ptx);
  first = std::max(first, 1);
  last = std::min(last, static_cast<int>(lines.size()));
  constexpr size_t max_chars = 240;
  std::string out;
  for (int n = first; n <= last; ++n) {
    std::string text(lines[n - 1]);
    for (char& c : text) {
      if (c == '\t') c = ' ';
    }
    if (text.size() > max_chars) text = text.substr(0, max_chars) + " ...";
    char number[16];
    std::snprintf(number, sizeof number, "%c%5d | ", n == mark ? '>' : ' ', n);
    out += number + text + "\n";
  }
  return out;
}

std::vector<ptxas_diagnostic> parse_ptxas_diagnostics(const std::string& log, const std::string& ptx) {
  // "ptxas application ptx input, line 11; error   : Unknown symbol '%r1'"; a
  // syntax error is reported as "line 14; fatal   : Parsing error near '4'".
  static const std::regex located(R"(^ptxas\b.*, line (\d+); (error|warning|fatal)\s*: (.*)$)");
  // "ptxas fatal   : Ptx assembly aborted due to errors", "ptxas warning : ..."
  static const std::regex unlocated(R"(^ptxas (fatal|error|warning)\s*: (.*)$)");
  // "ptxas info    : (C7508) Potential Performance Loss: ... around line 287 ..."
  static const std::regex advisory(R"(^ptxas info\s*: (\(C\d+\).*)$)");
  static const std::regex around_line(R"(line (\d+))");
  std::vector<ptxas_diagnostic> diagnostics;
  std::smatch m;
  for (const std::string& line : log_lines(log)) {
    ptxas_diagnostic d;
    if (std::regex_match(line, m, located)) {
      d.line = std::stoi(m[1]);
      d.severity = m[2] == "warning" ? "warning" : "error";
      d.message = trim(m[3]);
    } else if (std::regex_match(line, m, unlocated)) {
      if (m[2].str().find("aborted due to errors") != std::string::npos) continue;  // says nothing new
      d.severity = m[1] == "warning" ? "warning" : "error";
      d.message = trim(m[2]);
    } else if (std::regex_match(line, m, advisory)) {
      d.severity = "info";
      d.message = trim(m[1]);
      std::smatch where;
      if (std::regex_search(d.message, where, around_line)) d.line = std::stoi(where[1]);
    } else {
      continue;
    }
    if (d.line > 0) d.quoted = quote_ptx_lines(ptx, d.line - 2, d.line + 2, d.line);
    diagnostics.push_back(std::move(d));
  }
  return diagnostics;
}

std::vector<kernel_resources> parse_ptxas_resources(const std::string& log) {
  static const std::regex compiling_entry(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[\d+\])");
  std::vector<kernel_resources> kernels;
  // Stack and spill lines follow "Function properties for X", which may name
  // a device function; only entries become kernels.
  std::string properties_of;
  auto find = [&](const std::string& name) -> kernel_resources* {
    for (kernel_resources& k : kernels) {
      if (k.kernel == name) return &k;
    }
    return nullptr;
  };
  std::smatch m;
  for (const std::string& line : log_lines(log)) {
    if (std::regex_search(line, m, compiling_entry)) {
      kernel_resources k;
      k.kernel = m[1];
      kernels.push_back(k);
      properties_of = k.kernel;
    } else if (std::regex_search(line, m, properties)) {
      properties_of = m[1];
    } else if (std::regex_search(line, m, frame)) {
      if (kernel_resources* k = find(properties_of)) {
        k->stack_bytes = std::stoi(m[1]);
        k->spill_store_bytes = std::stoi(m[2]);
        k->spill_load_bytes = std::stoi(m[3]);
      }
    } else if (std::regex_search(line, m, used) && !kernels.empty()) {
      kernel_resources& k = kernels.back();
      k.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) k.static_shared_bytes = std::stoi(m[1]);
      k.constant_bytes = 0;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), cmem); it != std::sregex_iterator(); ++it) {
        k.constant_bytes += std::stoi((*it)[1]);
      }
    }
  }
  return kernels;
}

}  // namespace ptxbench
