#include "evaluator/compile/ptx_text.hpp"

#include <algorithm>
#include <cctype>

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

}  // namespace

std::set<int> local_load_lines(std::string_view ptx) {
  std::set<int> out;
  std::set<std::string> local;  // registers holding a generic address of local memory
  int line = 0;
  const std::string blanked = blank_comments_and_strings(ptx);
  for (std::string_view text : split_lines(blanked)) {
    ++line;
    for (size_t at = 0; at < text.size();) {
      const size_t semi = std::min(text.find(';', at), text.size());
      std::string opcode;
      const std::vector<std::string> ops = operands_of(text.substr(at, semi - at), opcode);
      at = semi + 1;
      if (ops.empty()) continue;
      const bool from_local =
          opcode.rfind("cvta.local", 0) == 0 ||
          ((opcode.rfind("mov.", 0) == 0 || opcode.rfind("add.", 0) == 0 || opcode.rfind("sub.", 0) == 0) &&
           std::any_of(ops.begin() + 1, ops.end(), [&](const std::string& o) { return local.count(o) > 0; }));
      if (from_local) {
        local.insert(ops[0]);
        continue;
      }
      if (opcode.rfind("ld.", 0) != 0 || ops.size() < 2) continue;
      const bool space_named = opcode.find(".global") != std::string::npos || opcode.find(".shared") != std::string::npos ||
                               opcode.find(".const") != std::string::npos || opcode.find(".param") != std::string::npos;
      if (opcode.find(".local") != std::string::npos || (!space_named && local.count(address_base(ops[1]))))
        out.insert(line);
    }
  }
  return out;
}

}  // namespace ptxbench::ptx_text
