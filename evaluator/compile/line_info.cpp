// add_line_info: one linear scan of the candidate's PTX with comments and
// strings blanked (ptx_text), tracking statement boundaries, so that a `.loc`
// never lands inside a statement that spans lines (a wgmma's operand list),
// inside an initialiser's braces, or between a kernel's header and its body.
#include "evaluator/compile/line_info.hpp"

#include <cctype>
#include <string_view>

#include "evaluator/compile/ptx_text.hpp"

namespace ptxbench {
namespace {

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '%' || c == '@' ||
         c == '!';
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Directives that end at the end of their line (no ';').
bool ends_at_line_end(std::string_view word) {
  return word == ".version" || word == ".target" || word == ".address_size" || word == ".file" || word == ".loc";
}

bool is_header(std::string_view word) { return word == ".version" || word == ".target" || word == ".address_size"; }

// What the scan decides per line (1-based index into the vectors).
struct line_plan {
  std::vector<char> loc;                            // a `.loc` goes before the line
  struct span {
    size_t line, from, to;
  };
  std::vector<span> blank;                          // the candidate's .file/.loc: columns [from, to) to blank
  int header_line = 0;                              // `.file` goes after this line
};

// The scanner's state across lines.
struct scan_state {
  std::vector<bool> blocks;  // open braces: true for a .section's data block
  bool in_statement = false;
  bool directive = false;
  bool at_line_end = false;  // the statement ends with its line
  std::string first_word;
  char last = 0;             // last non-space character of the statement so far
  bool other_statement_seen = false;
};

void scan_line(std::string_view line, int number, scan_state& s, line_plan& plan) {
  const bool starts_outside = !s.in_statement;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (is_space(c)) continue;
    if (s.in_statement) {
      if (c == ';') {
        s.in_statement = false;
      } else if (c == '{' && s.directive && s.last != '=' && s.last != ',' && s.last != '{') {
        // A kernel's or a section's body, not an initialiser.
        s.in_statement = false;
        s.blocks.push_back(s.first_word == ".section");
        continue;
      }
      s.last = c;
      continue;
    }
    if (c == '{') {
      s.blocks.push_back(false);
      continue;
    }
    if (c == '}') {
      if (!s.blocks.empty()) s.blocks.pop_back();
      continue;
    }
    if (c == ';') continue;
    size_t end = i;
    while (end < line.size() && is_word_char(line[end])) ++end;
    size_t next = end;
    while (next < line.size() && is_space(line[next])) ++next;
    if (end > i && c != '.' && next < line.size() && line[next] == ':' &&
        (next + 1 >= line.size() || line[next + 1] != ':')) {
      i = next;  // a label
      continue;
    }
    const std::string_view word = line.substr(i, end - i);
    const bool in_section = !s.blocks.empty() && s.blocks.back();
    s.in_statement = true;
    s.directive = c == '.';
    s.first_word = std::string(word);
    s.at_line_end = in_section || ends_at_line_end(word);
    s.last = 0;
    if ((word == ".file" || word == ".loc") && !in_section) {
      size_t to = line.size();
      while (to > i && is_space(line[to - 1])) --to;
      plan.blank.push_back({size_t(number), i, to});
      s.in_statement = false;
      break;
    }
    if (s.blocks.empty() && is_header(word) && !s.other_statement_seen) {
      plan.header_line = number;
    } else if (s.blocks.empty()) {
      s.other_statement_seen = true;
    }
    if (!s.directive && !s.blocks.empty() && !in_section && starts_outside) plan.loc[size_t(number)] = 1;
    i = end - 1;
  }
  if (s.in_statement && s.at_line_end) s.in_statement = false;
}

// Per 1-based line: whether it begins inside a /* */ comment (a `.loc` put
// before it would land in the comment). Strings end at a newline, as in
// ptx_text::blank_comments_and_strings.
std::vector<char> starts_in_comment(const std::string& ptx) {
  std::vector<char> out{0, 0};
  enum class state { code, line_comment, block_comment, string } s = state::code;
  for (size_t i = 0; i < ptx.size(); ++i) {
    const char c = ptx[i], next = i + 1 < ptx.size() ? ptx[i + 1] : '\0';
    if (c == '\n') {
      if (s != state::block_comment) s = state::code;
      out.push_back(s == state::block_comment);
      continue;
    }
    if (s == state::code && c == '/' && (next == '/' || next == '*')) {
      s = next == '/' ? state::line_comment : state::block_comment;
      ++i;
    } else if (s == state::code && c == '"') {
      s = state::string;
    } else if (s == state::string && c == '\\' && next != '\n') {
      ++i;
    } else if (s == state::string && c == '"') {
      s = state::code;
    } else if (s == state::block_comment && c == '*' && next == '/') {
      s = state::code;
      ++i;
    }
  }
  return out;
}

}  // namespace

line_annotated_ptx add_line_info(const std::string& ptx) {
  line_annotated_ptx out;
  const std::string blanked = ptx_text::blank_comments_and_strings(ptx);
  const std::vector<std::string_view> lines = ptx_text::split_lines(blanked);
  line_plan plan;
  plan.loc.assign(lines.size() + 1, 0);
  scan_state state;
  for (size_t n = 0; n < lines.size(); ++n) scan_line(lines[n], int(n + 1), state, plan);
  const std::vector<char> in_comment = starts_in_comment(ptx);
  for (size_t n = 1; n < plan.loc.size() && n < in_comment.size(); ++n)
    if (in_comment[n]) plan.loc[n] = 0;
  if (plan.header_line == 0) {
    out.problem = "the PTX has no .version/.target header to put a .file directive after";
    return out;
  }
  std::vector<std::vector<std::pair<size_t, size_t>>> blanks(lines.size() + 1);
  for (const auto& b : plan.blank) blanks[b.line].emplace_back(b.from, b.to);
  out.ptx.reserve(ptx.size() + ptx.size() / 2 + 64);
  size_t at = 0;
  for (size_t n = 1; n <= lines.size(); ++n) {
    const size_t eol = ptx.find('\n', at);
    std::string line = ptx.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
    for (const auto& [from, to] : blanks[n]) {
      line.replace(from, to - from, to - from, ' ');
      ++out.dropped_directives;
    }
    if (plan.loc[n]) {
      out.ptx += "\t.loc 1 " + std::to_string(n) + " 0\n";
      ++out.instruction_lines;
    }
    out.ptx += line;
    if (eol != std::string::npos) out.ptx += '\n';
    if (int(n) == plan.header_line) {
      if (eol == std::string::npos) out.ptx += '\n';
      out.ptx += std::string(".file 1 \"") + k_line_info_file + "\"\n";
    }
    if (eol == std::string::npos) break;
    at = eol + 1;
  }
  return out;
}

}  // namespace ptxbench
