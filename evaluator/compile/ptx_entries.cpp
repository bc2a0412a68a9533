// parse_ptx_entries: reads the `.entry` headers of a PTX module (kernel name,
// parameter list, performance directives) from the token stream of the
// comment-free text. Bodies are skipped by brace matching.
#include <cctype>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>

#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/ptx_text.hpp"

namespace ptxbench {
namespace {

using ptx_text::token;

// Bytes of one element of a PTX fundamental type (.u64 -> 8), 0 if not a type.
int type_bytes(const std::string& type) {
  static const std::set<std::string> width8 = {".b8", ".u8", ".s8"};
  static const std::set<std::string> width16 = {".b16", ".u16", ".s16", ".f16", ".bf16"};
  static const std::set<std::string> width32 = {".b32", ".u32", ".s32", ".f32", ".f16x2", ".bf16x2", ".tf32"};
  static const std::set<std::string> width64 = {".b64", ".u64", ".s64", ".f64"};
  if (width8.count(type)) return 1;
  if (width16.count(type)) return 2;
  if (width32.count(type)) return 4;
  if (width64.count(type)) return 8;
  if (type == ".b128") return 16;
  if (type == ".pred") return 1;
  return 0;
}

int parse_int(const std::string& s, int fallback) {
  int value = fallback;
  const auto result = std::from_chars(s.data(), s.data() + s.size(), value);
  return result.ec == std::errc() && result.ptr == s.data() + s.size() ? value : fallback;
}

class entry_parser {
 public:
  explicit entry_parser(const std::vector<token>& tokens) : m_tokens(tokens) {}

  std::vector<ptx_entry> parse() {
    std::vector<ptx_entry> entries;
    int depth = 0;
    while (m_pos < m_tokens.size()) {
      const token& t = m_tokens[m_pos];
      if (t.text == "{") {
        ++depth;
      } else if (t.text == "}") {
        depth = depth > 0 ? depth - 1 : 0;
      } else if (depth == 0 && t.text == ".entry") {
        ++m_pos;
        if (auto entry = parse_entry(t.line)) entries.push_back(std::move(*entry));
        continue;
      }
      ++m_pos;
    }
    return entries;
  }

 private:
  const token* peek(size_t ahead = 0) const {
    return m_pos + ahead < m_tokens.size() ? &m_tokens[m_pos + ahead] : nullptr;
  }
  bool at(const char* text) const { return peek() && peek()->text == text; }

  std::optional<ptx_entry> parse_entry(int line) {
    if (!peek() || !peek()->is_word) return std::nullopt;
    ptx_entry entry;
    entry.name = peek()->text;
    entry.line = line;
    ++m_pos;
    if (at("(")) {
      ++m_pos;
      while (peek() && !at(")")) {
        if (at(",")) {
          ++m_pos;
          continue;
        }
        entry.params.push_back(parse_param());
      }
      if (at(")")) ++m_pos;
    }
    parse_directives(entry);
    return entry;
  }

  // `.param [.align N] .type [.ptr [.space] [.align N]] name[\[len\]]`. After
  // .ptr, an .align states the pointee's alignment, not the parameter's.
  ptx_param parse_param() {
    ptx_param param;
    bool seen_ptr = false;
    int element_bytes = 0;
    while (peek() && !at(",") && !at(")")) {
      const token& t = *peek();
      if (t.text == ".align" && peek(1)) {
        const int value = parse_int(peek(1)->text, 0);
        if (!seen_ptr) param.align = value;
        m_pos += 2;
        continue;
      }
      if (t.text == ".ptr") {
        seen_ptr = true;
      } else if (t.text == "[" && peek(1)) {
        param.array_length = parse_int(peek(1)->text, 0);
        m_pos += 2;
        if (at("]")) ++m_pos;
        continue;
      } else if (t.is_word && t.text[0] == '.') {
        if (const int bytes = type_bytes(t.text); bytes > 0) {
          param.type = t.text;
          element_bytes = bytes;
        }
      } else if (t.is_word) {
        param.name = t.text;
      }
      ++m_pos;
    }
    if (param.name == ".param") param.name.clear();
    // `.b64 x[2000000000]` must not overflow int: such a size saturates (no
    // binding accepts it, and ptxas refuses the module).
    const int64_t total = int64_t(element_bytes) * (param.array_length > 0 ? param.array_length : 1);
    param.size_bytes = static_cast<int>(std::min<int64_t>(total, std::numeric_limits<int>::max()));
    if (param.align == 0) param.align = element_bytes;
    return param;
  }

  // Directives between the parameter list and the body, e.g. `.maxntid 256, 1, 1`.
  void parse_directives(ptx_entry& entry) {
    while (peek() && !at("{") && !at(";")) {
      const token& t = *peek();
      if (t.is_word && t.text[0] == '.' && t.text != ".entry") {
        const std::string name = t.text;
        std::string value;
        ++m_pos;
        while (peek() && (at(",") || (peek()->is_word && peek()->text[0] != '.'))) {
          value += peek()->text;
          ++m_pos;
        }
        entry.directives[name] = value;
        continue;
      }
      if (t.text == ".entry") return;  // a prototype without a body, then the next entry
      ++m_pos;
    }
  }

  const std::vector<token>& m_tokens;
  size_t m_pos = 0;
};

}  // namespace

std::vector<ptx_entry> parse_ptx_entries(const std::string& ptx) {
  const std::vector<token> tokens = ptx_text::tokenize(ptx_text::blank_comments_and_strings(ptx));
  return entry_parser(tokens).parse();
}

}  // namespace ptxbench
