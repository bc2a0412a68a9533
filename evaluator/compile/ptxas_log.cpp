#include "evaluator/compile/ptxas_log.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

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

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Decimal digits ending just before `end` as an int, saturated at INT_MAX
// (a log line may carry any number); -1 when there are none.
int number_ending_at(const std::string& s, size_t end) {
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(s[begin - 1]))) --begin;
  if (begin == end) return -1;
  int64_t value = 0;
  for (size_t i = begin; i < end; ++i) value = std::min<int64_t>(value * 10 + (s[i] - '0'), INT_MAX);
  return static_cast<int>(value);
}

// Digits that start right after the first `prefix` followed by a digit; -1 if none.
int number_after(const std::string& s, const std::string& prefix) {
  for (size_t at = s.find(prefix); at != std::string::npos; at = s.find(prefix, at + 1)) {
    size_t i = at + prefix.size();
    size_t end = i;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
    if (end > i) return number_ending_at(s, end);
  }
  return -1;
}

// The number directly before `suffix` ("12 bytes smem" -> 12); 0 if none.
int number_before(const std::string& s, const std::string& suffix) {
  const size_t at = s.find(suffix);
  if (at == std::string::npos) return 0;
  return std::max(number_ending_at(s, at), 0);
}

int saturating_add(int a, int b) { return b < 0 ? a : int(std::min<int64_t>(int64_t(a) + b, INT_MAX)); }

std::optional<std::string> quoted_after(const std::string& line, const std::string& prefix) {
  const size_t at = line.find(prefix);
  if (at == std::string::npos) return std::nullopt;
  const size_t from = at + prefix.size();
  const size_t end = line.find('\'', from);
  if (end == std::string::npos || end == from) return std::nullopt;
  return line.substr(from, end - from);
}

struct severity_message {
  std::string severity;
  std::string message;
};

// "<severity> <spaces>: message" starting at `from`.
std::optional<severity_message> severity_after(const std::string& line, size_t from) {
  if (from > line.size()) return std::nullopt;
  for (const char* sev : {"error", "warning", "fatal", "info"}) {
    const std::string s = sev;
    if (line.compare(from, s.size(), s) != 0) continue;
    size_t i = from + s.size();
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size() || line[i] != ':') return std::nullopt;
    return severity_message{s, line.substr(i + 1)};
  }
  return std::nullopt;
}

bool starts_with_code(const std::string& m) {
  if (m.size() < 3 || m[0] != '(' || m[1] != 'C') return false;
  size_t i = 2;
  while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i]))) ++i;
  return i > 2 && i < m.size() && m[i] == ')';
}

struct located_message {
  int line;
  std::string severity;
  std::string message;
};

// "ptxas ..., line N; error|warning|fatal : message" (the last such ", line N; ").
std::optional<located_message> locate(const std::string& line) {
  for (size_t at = line.rfind(", line "); at != std::string::npos && at > 0; at = line.rfind(", line ", at - 1)) {
    size_t i = at + 7, end = i;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
    if (end == i || end + 1 >= line.size() || line[end] != ';' || line[end + 1] != ' ') continue;
    auto sev = severity_after(line, end + 2);
    if (!sev || sev->severity == "info") continue;
    return located_message{number_ending_at(line, end), sev->severity == "warning" ? "warning" : "error", sev->message};
  }
  return std::nullopt;
}

}  // namespace

std::string quote_ptx_lines(const std::vector<std::string_view>& lines, int first, int last, int mark) {
  first = std::max(first, 1);
  last = std::min(last, static_cast<int>(std::min<size_t>(lines.size(), std::numeric_limits<int>::max())));
  constexpr size_t max_chars = 240;
  std::string out;
  for (int n = first; n <= last; ++n) {
    std::string text(lines[size_t(n) - 1].substr(0, max_chars + 1));
    for (char& c : text) {
      if (c == '\t') c = ' ';
    }
    if (text.size() > max_chars) text = text.substr(0, max_chars) + " ...";
    char number[24];
    std::snprintf(number, sizeof number, "%c%5d | ", n == mark ? '>' : ' ', n);
    out += number + text + "\n";
  }
  return out;
}

std::string quote_ptx_lines(const std::string& ptx, int first, int last, int mark) {
  return quote_ptx_lines(ptx_text::split_lines(ptx), first, last, mark);
}

std::vector<ptxas_diagnostic> parse_ptxas_diagnostics(const std::string& log, const std::string& ptx) {
  // "ptxas application ptx input, line 11; error   : Unknown symbol '%r1'"; a
  // syntax error is reported as "line 14; fatal   : Parsing error near '4'".
  // "ptxas fatal   : Ptx assembly aborted due to errors", "ptxas warning : ..."
  // "ptxas info    : (C7508) Potential Performance Loss: ... around line 287 ..."
  // nvJitLink's own linker errors carry no tool name: "error   : Undefined
  // reference to 'foo' in 'candidate.ptx'" (its trailer "ERROR 9: finish" is no diagnostic).
  // Read by hand, not by std::regex: its recursive matcher overflows the stack
  // on long lines, and the log echoes the candidate's text.
  std::vector<ptxas_diagnostic> diagnostics;
  std::vector<std::string_view> ptx_lines;
  bool split = false;
  for (const std::string& line : log_lines(log)) {
    if (diagnostics.size() >= k_max_ptxas_diagnostics) break;
    if (auto linker = severity_after(line, 0); linker && linker->severity == "error") {
      ptxas_diagnostic d;
      d.severity = "error";
      d.message = trim(linker->message);
      if (!d.message.empty()) diagnostics.push_back(std::move(d));
      continue;
    }
    if (line.rfind("ptxas", 0) != 0) continue;
    const std::string_view rest = std::string_view(line).substr(5);
    if (!rest.empty() && is_word_char(rest.front())) continue;  // "ptxasfoo" is not ptxas
    ptxas_diagnostic d;
    if (auto located = locate(line)) {
      d.line = located->line;
      d.severity = located->severity;
      d.message = trim(located->message);
    } else if (auto sev = severity_after(line, 6); sev && line.size() > 6 && line[5] == ' ') {
      if (sev->severity == "info") {
        const std::string message = trim(sev->message);
        if (!starts_with_code(message)) continue;
        d.severity = "info";
        d.message = message;
        d.line = std::max(0, number_after(d.message, "line "));
      } else {
        if (sev->message.find("aborted due to errors") != std::string::npos) continue;  // says nothing new
        d.severity = sev->severity == "warning" ? "warning" : "error";
        d.message = trim(sev->message);
      }
    } else {
      continue;
    }
    if (d.line > 0) {
      if (!split) ptx_lines = ptx_text::split_lines(ptx), split = true;
      // d.line may be INT_MAX (saturated): d.line + 2 would overflow (found by the ASan/UBSan build).
      d.quoted = quote_ptx_lines(ptx_lines, d.line - 2, d.line > INT_MAX - 2 ? INT_MAX : d.line + 2, d.line);
    }
    diagnostics.push_back(std::move(d));
  }
  return diagnostics;
}

std::vector<kernel_resources> parse_ptxas_resources(const std::string& log) {
  std::vector<kernel_resources> kernels;
  // Stack and spill lines follow "Function properties for X", which may name
  // a device function; only entries become kernels. Kernels are found by name
  // through an index: a linear search made 6 000 entries quadratic.
  std::unordered_map<std::string, size_t> index;
  std::string properties_of;
  for (const std::string& line : log_lines(log)) {
    if (auto name = quoted_after(line, "Compiling entry function '")) {
      kernel_resources k;
      k.kernel = *name;
      index.emplace(k.kernel, kernels.size());
      kernels.push_back(k);
      properties_of = k.kernel;
    } else if (size_t at = line.find("Function properties for "); at != std::string::npos) {
      const size_t from = at + 24;
      properties_of = line.substr(from, line.find_first_of(" \t", from) - from);
    } else if (line.find(" bytes stack frame, ") != std::string::npos) {
      auto it = index.find(properties_of);
      if (it == index.end()) continue;
      kernel_resources& k = kernels[it->second];
      k.stack_bytes = number_before(line, " bytes stack frame");
      k.spill_store_bytes = number_before(line, " bytes spill stores");
      k.spill_load_bytes = number_before(line, " bytes spill loads");
    } else if (line.find("Used ") != std::string::npos && !kernels.empty()) {
      const int registers = number_after(line, "Used ");
      if (registers < 0 || line.find(" registers", line.find("Used ")) == std::string::npos) continue;
      kernel_resources& k = kernels.back();
      k.registers = registers;
      if (line.find(" bytes smem") != std::string::npos) k.static_shared_bytes = number_before(line, " bytes smem");
      k.constant_bytes = 0;
      for (size_t at = line.find(" bytes cmem["); at != std::string::npos; at = line.find(" bytes cmem[", at + 1))
        k.constant_bytes = saturating_add(k.constant_bytes, number_ending_at(line, at));
    }
  }
  return kernels;
}

}  // namespace ptxbench
