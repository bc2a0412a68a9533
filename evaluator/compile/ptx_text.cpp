#include "evaluator/compile/ptx_text.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

namespace ptxbench::ptx_text {

std::string blank_comments_and_strings(std::string_view ptx) {
  std::string out(ptx);
  enum class state { code, line_comment, block_comment, string };
  state s = state::code;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (s) {
      case state::code:
        if (c == '/' && next == '/') {
          s = state::line_comment;
          out[i] = ' ';
        } else if (c == '/' && next == '*') {
          s = state::block_comment;
          out[i] = ' ';
          out[++i] = ' ';
        } else if (c == '"') {
          s = state::string;  // the quotes stay so a string stays one token boundary
        }
        break;
      case state::line_comment:
        if (c == '\n') {
          s = state::code;
        } else {
          out[i] = ' ';
        }
        break;
      case state::block_comment:
        if (c == '*' && next == '/') {
          out[i] = ' ';
          out[++i] = ' ';
          s = state::code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case state::string:
        if (c == '\\' && next != '\0' && next != '\n') {
          out[i] = ' ';
          out[++i] = ' ';
        } else if (c == '"' || c == '\n') {
          s = state::code;
        } else {
          out[i] = ' ';
        }
        break;
    }
  }
  return out;
}

namespace {
bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '%';
}
}  // namespace

std::vector<token> tokenize(std::string_view text) {
  std::vector<token> tokens;
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (is_word_char(c)) {
      size_t j = i;
      while (j < text.size()) {
        if (is_word_char(text[j])) {
          ++j;
        } else if (text[j] == ':' && j + 1 < text.size() && text[j + 1] == ':' && j + 2 < text.size() &&
                   is_word_char(text[j + 2])) {
          j += 2;
        } else {
          break;
        }
      }
      tokens.push_back({std::string(text.substr(i, j - i)), line, true});
      i = j;
      continue;
    }
    tokens.push_back({std::string(1, c), line, false});
    ++i;
  }
  return tokens;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

namespace {

bool is_register_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$'; }

// The operands of one statement after its opcode, split at commas, trimmed.
std::vector<std::string> operands_of(std::string_view statement, std::string& opcode) {
  size_t at = statement.find_first_not_of(" \t{");
  if (at == std::string_view::npos) return {};
  if (statement[at] == '@') at = statement.find_first_of(" \t", at), at = statement.find_first_not_of(" \t", at);
  if (at == std::string_view::npos) return {};
  const size_t end = statement.find_first_of(" \t", at);
  opcode = std::string(statement.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
  std::vector<std::string> out;
  if (end == std::string_view::npos) return out;
  std::string current;
  for (char c : statement.substr(end)) {
    if (c == ',') {
      out.push_back(current);
      current.clear();
    } else if (c != ' ' && c != '\t') {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

// The register an address operand ("[%rd4+16]", "[mut_p]") is based on.
std::string address_base(const std::string& operand) {
  if (operand.size() < 3 || operand.front() != '[') return "";
  size_t n = 1;
  while (n < operand.size() && is_register_char(operand[n])) ++n;
  return operand.substr(1, n - 1);
}

// One statement of a line: its labels stripped, its predicate skipped.
struct statement {
  std::vector<std::string> labels;
  std::string opcode;
  std::vector<std::string> operands;
};

bool is_label_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

// Splits one blanked line at ';', '{' and '}' (outside brackets) and reads each piece's labels
// ("L: ..." or a line "L:"), opcode and operands.
std::vector<statement> statements_of(std::string_view line) {
  std::vector<statement> out;
  size_t at = 0;
  while (at <= line.size()) {
    // The next ';', or '{' / '}' outside an address ("[%rd1, {%r3, %r4}]" is one operand).
    size_t end = at;
    for (int depth = 0; end < line.size(); ++end) {
      const char c = line[end];
      if (c == '[') ++depth;
      if (c == ']' && depth > 0) --depth;
      if (c == ';' || (depth == 0 && (c == '{' || c == '}'))) break;
    }
    std::string_view piece = line.substr(at, end - at);
    at = end + 1;
    statement st;
    for (;;) {
      const size_t b = piece.find_first_not_of(" \t");
      if (b == std::string_view::npos) {
        piece = {};
        break;
      }
      piece.remove_prefix(b);
      size_t n = 0;
      while (n < piece.size() && is_label_char(piece[n])) ++n;
      if (n == 0 || n >= piece.size() || piece[n] != ':' || (n + 1 < piece.size() && piece[n + 1] == ':')) break;
      st.labels.emplace_back(piece.substr(0, n));
      piece.remove_prefix(n + 1);
    }
    if (!piece.empty()) st.operands = operands_of(piece, st.opcode);
    if (!st.labels.empty() || !st.opcode.empty()) out.push_back(std::move(st));
  }
  return out;
}

}  // namespace

std::set<int> local_load_lines(std::string_view ptx) {
  std::set<int> out;
  std::set<std::string> local;  // registers holding a generic address of local memory
  int line = 0;
  const std::string blanked = blank_comments_and_strings(ptx);
  for (std::string_view text : split_lines(blanked)) {
    ++line;
    for (const statement& st : statements_of(text)) {
      const std::string& opcode = st.opcode;
      const std::vector<std::string>& ops = st.operands;
      if (ops.empty()) continue;
      const bool from_local =
          opcode.starts_with("cvta.local") ||
          ((opcode.starts_with("mov.") || opcode.starts_with("add.") || opcode.starts_with("sub.")) &&
           std::any_of(ops.begin() + 1, ops.end(), [&](const std::string& o) { return local.count(o) > 0; }));
      if (from_local) {
        local.insert(ops[0]);
        continue;
      }
      if (!opcode.starts_with("ld.") || ops.size() < 2) continue;
      const bool space_named = opcode.find(".global") != std::string::npos || opcode.find(".shared") != std::string::npos ||
                               opcode.find(".const") != std::string::npos || opcode.find(".param") != std::string::npos;
      if (opcode.find(".local") != std::string::npos || (!space_named && local.count(address_base(ops[1]))))
        out.insert(line);
    }
  }
  return out;
}

namespace {

// The address register of the first "[...]" operand.
std::string first_address(const std::vector<std::string>& ops) {
  for (const std::string& o : ops)
    if (!o.empty() && o.front() == '[') return address_base(o);
  return "";
}

}  // namespace

bool barrier_roles::in_producer(int line) const {
  return std::any_of(producer_loops.begin(), producer_loops.end(),
                     [&](const std::pair<int, int>& l) { return l.first <= line && line <= l.second; });
}

namespace {

// What barrier_roles_of reads from the text, line by line.
struct barrier_text {
  std::map<std::string, std::vector<int>> labels;  // name -> lines where it is defined, ascending
  std::vector<int> label_lines;                    // every label's line, ascending
  std::vector<int> statements_up_to{0};            // instructions on lines 1..n
  std::vector<std::pair<int, std::string>> branches, waits;  // line, target / barrier
  std::vector<std::pair<int, std::string>> tma;               // line, barrier a TMA load or expect_tx names
};

barrier_text scan_barrier_text(std::string_view ptx) {
  barrier_text b;
  auto& [labels, label_lines, statements_up_to, branches, waits, tma] = b;
  const std::string blanked = blank_comments_and_strings(ptx);
  int line = 0;
  for (std::string_view text : split_lines(blanked)) {
    ++line;
    int count = 0;
    for (const statement& st : statements_of(text)) {
      for (const std::string& l : st.labels) {
        labels[l].push_back(line);
        label_lines.push_back(line);
      }
      if (st.opcode.empty() || st.opcode.front() == '.') continue;
      ++count;
      if (st.opcode.starts_with("bra") && !st.operands.empty()) {
        branches.emplace_back(line, st.operands.back());
      } else if (st.opcode.starts_with("mbarrier.try_wait") || st.opcode.starts_with("mbarrier.test_wait")) {
        waits.emplace_back(line, first_address(st.operands));
      } else if (st.opcode.starts_with("cp.async.bulk") && st.opcode.find("mbarrier::complete_tx") != std::string::npos &&
                 !st.operands.empty()) {
        tma.emplace_back(line, address_base(st.operands.back()));
      } else if (st.opcode.starts_with("mbarrier.arrive.expect_tx") || st.opcode.starts_with("mbarrier.expect_tx")) {
        tma.emplace_back(line, first_address(st.operands));
      }
    }
    statements_up_to.push_back(statements_up_to.back() + count);
  }
  return b;
}

}  // namespace

barrier_roles barrier_roles_of(std::string_view ptx) {
  const barrier_text text = scan_barrier_text(ptx);
  // References, not a structured binding: lambdas below use them (clang 14).
  const auto& labels = text.labels;
  const auto& label_lines = text.label_lines;
  const auto& statements_up_to = text.statements_up_to;
  const auto& branches = text.branches;
  const auto& waits = text.waits;
  const auto& tma = text.tma;
  // Loops: a branch back to the nearest definition of its label at or before it.
  std::vector<std::pair<int, int>> loops;
  for (const auto& [at, target] : branches) {
    const auto l = labels.find(target);
    if (l == labels.end()) continue;
    const auto after = std::upper_bound(l->second.begin(), l->second.end(), at);
    if (after != l->second.begin()) loops.emplace_back(*std::prev(after), at);
  }
  // Bounded work on hostile text: each wait and load looks at every loop and
  // load, so past 2^24 pairs (a kernel of thousands of loops and waits) no
  // roles are given and the profile charges nothing through barriers.
  if ((loops.size() + tma.size()) * (waits.size() + tma.size()) > (size_t(1) << 24)) return {};
  std::vector<int> waits_up_to(statements_up_to.size(), 0), tma_up_to(statements_up_to.size(), 0);
  for (const auto& w : waits) ++waits_up_to[size_t(w.first)];
  for (const auto& t : tma) ++tma_up_to[size_t(t.first)];
  for (size_t i = 1; i < waits_up_to.size(); ++i) {
    waits_up_to[i] += waits_up_to[i - 1];
    tma_up_to[i] += tma_up_to[i - 1];
  }
  const auto size_of = [&](const std::pair<int, int>& l) { return statements_up_to[size_t(l.second)] - statements_up_to[size_t(l.first - 1)]; };
  const auto contains = [](const std::pair<int, int>& l, int at) { return l.first <= at && at <= l.second; };
  const auto has_wait = [&](const std::pair<int, int>& l) {
    return waits_up_to[size_t(l.second)] > waits_up_to[size_t(l.first - 1)];
  };
  const auto has_tma = [&](const std::pair<int, int>& l) {
    return tma_up_to[size_t(l.second)] > tma_up_to[size_t(l.first - 1)];
  };
  const auto spin = [&](const std::pair<int, int>& l) { return size_of(l) <= 16 && has_wait(l) && !has_tma(l); };
  // The innermost loop around a line that satisfies `keep`.
  const auto innermost = [&](int at, auto keep) -> std::optional<std::pair<int, int>> {
    std::optional<std::pair<int, int>> best;
    for (const auto& l : loops)
      if (contains(l, at) && keep(l) && (!best || l.second - l.first < best->second - best->first)) best = l;
    return best;
  };
  barrier_roles out;
  std::map<std::pair<int, int>, std::set<std::string>> loop_barriers;
  for (const auto& [at, bar] : tma) {
    const auto l = innermost(at, [&](const std::pair<int, int>& c) { return !spin(c); });
    if (!l) continue;
    if (!loop_barriers.count(*l)) out.producer_loops.push_back(*l);
    loop_barriers[*l].insert(bar);
  }
  for (const auto& [at, bar] : waits) {
    barrier_wait w;
    w.barrier = bar;
    const auto s = innermost(at, spin);
    w.first = s ? s->first : at;
    w.last = s ? s->second : at;
    const auto p = innermost(at, [&](const std::pair<int, int>& c) { return loop_barriers.count(c) > 0; });
    w.in_producer = p.has_value();
    w.own_loads = p && !bar.empty() && loop_barriers[*p].count(bar) > 0;
    // Outside a loop: code that issued a TMA load on this barrier earlier in
    // the same straight-line block (no label between) waits for it.
    if (!p && !bar.empty())
      for (const auto& [t, tbar] : tma)
        if (tbar == bar && t <= w.first) {
          const auto next_label = std::upper_bound(label_lines.begin(), label_lines.end(), t);  // lines ascend
          if (next_label == label_lines.end() || *next_label >= w.first) w.in_producer = w.own_loads = true;
        }
    out.waits.push_back(std::move(w));
  }
  return out;
}

}  // namespace ptxbench::ptx_text
