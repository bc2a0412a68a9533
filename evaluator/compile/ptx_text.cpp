#include "evaluator/compile/ptx_text.hpp"

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

}  // namespace ptxbench::ptx_text
