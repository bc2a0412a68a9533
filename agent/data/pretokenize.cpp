#include "agent/data/pretokenize.hpp"

#include <algorithm>
#include <cstdint>

namespace ptxbench::data {
namespace {

struct code_point_range {
  uint32_t first, last;
};
#include "agent/data/unicode_tables.inc"

template <size_t N>
bool in_ranges(const code_point_range (&table)[N], uint32_t cp) {
  auto it = std::upper_bound(std::begin(table), std::end(table), cp,
                             [](uint32_t v, const code_point_range& r) { return v < r.first; });
  return it != std::begin(table) && cp <= std::prev(it)->last;
}

constexpr uint32_t k_invalid = 0xFFFFFFFF;  // a byte that is not UTF-8: no class

struct symbol {
  uint32_t cp;
  uint32_t offset;  // byte offset in the text
};

// Decodes UTF-8; an invalid or truncated sequence yields its first byte alone.
std::vector<symbol> decode(std::string_view s) {
  std::vector<symbol> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    uint32_t cp = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
               (cp >= 0xD800 && cp <= 0xDFFF)))
      ok = false;  // overlong, out of range or a surrogate
    out.push_back({ok ? cp : k_invalid, static_cast<uint32_t>(i)});
    i += ok ? len : 1;
  }
  return out;
}

bool is_letter(uint32_t cp) { return cp != k_invalid && in_ranges(k_letter_ranges, cp); }
bool is_number(uint32_t cp) { return cp != k_invalid && in_ranges(k_number_ranges, cp); }
// Unicode White_Space, which Oniguruma's \s matches in UTF-8 text.
bool is_space(uint32_t cp) {
  return (cp >= 0x9 && cp <= 0xD) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}
bool is_other(uint32_t cp) { return !is_space(cp) && !is_letter(cp) && !is_number(cp); }
bool is_newline(uint32_t cp) { return cp == '\r' || cp == '\n'; }

class scanner {
 public:
  scanner(const std::vector<symbol>& s) : m_s(s), m_n(s.size()) {}

  // The end of the run of symbols from `i` that satisfy `pred`.
  template <class Pred>
  size_t run(size_t i, Pred pred) const {
    while (i < m_n && pred(m_s[i].cp)) ++i;
    return i;
  }
  uint32_t at(size_t i) const { return i < m_n ? m_s[i].cp : k_invalid; }
  size_t size() const { return m_n; }

  // 's 't 're 've 'm 'll 'd at i (ASCII case folded when `fold`, with ſ as s).
  size_t contraction(size_t i, bool fold) const {
    if (at(i) != '\'') return i;
    auto lower = [&](uint32_t c) -> uint32_t {
      if (!fold) return c;
      if (c == 0x17F) return 's';
      return c >= 'A' && c <= 'Z' ? c + 32 : c;
    };
    const uint32_t a = lower(at(i + 1)), b = lower(at(i + 2));
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
    return i;
  }

  // \s+(?!\S) then \s+: a whitespace run, less its last symbol when a
  // non-space follows and the run is longer than one.
  size_t trailing_space(size_t i) const {
    const size_t j = run(i, is_space);
    return j == m_n || j - i == 1 ? j : j - 1;
  }

 private:
  const std::vector<symbol>& m_s;
  size_t m_n;
};

size_t next_gpt2(const scanner& s, size_t i) {
  if (size_t j = s.contraction(i, false); j != i) return j;
  const uint32_t c = s.at(i);
  const bool space = c == ' ';
  for (auto cls : {is_letter, is_number, is_other}) {
    if (space && cls(s.at(i + 1))) return s.run(i + 1, cls);
    if (cls(c)) return s.run(i, cls);
  }
  return s.trailing_space(i);
}

size_t next_llama(const scanner& s, size_t i, bool three_digits) {
  if (size_t j = s.contraction(i, true); j != i) return j;
  const uint32_t c = s.at(i);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!is_newline(c) && !is_letter(c) && !is_number(c) && is_letter(s.at(i + 1))) return s.run(i + 1, is_letter);
  if (is_letter(c)) return s.run(i, is_letter);
  // \p{N}{1,3} or \p{N}
  if (is_number(c)) return std::min(s.run(i, is_number), i + (three_digits ? 3 : 1));
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  if (c == ' ' && is_other(s.at(i + 1))) return s.run(s.run(i + 1, is_other), is_newline);
  if (is_other(c)) return s.run(s.run(i, is_other), is_newline);
  // \s*[\r\n]+: the whitespace run up to its last newline.
  const size_t j = s.run(i, is_space);
  for (size_t k = j; k > i; --k)
    if (is_newline(s.at(k - 1))) return k;
  return s.trailing_space(i);
}

}  // namespace

const char* pattern_text(split_pattern p) {
  switch (p) {
    case split_pattern::gpt2:
      return R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
    case split_pattern::llama3:
      return R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    case split_pattern::qwen2:
      return R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  }
  return "";
}

void split_pieces(std::string_view text, split_pattern p, std::vector<std::string_view>& out) {
  const auto symbols = decode(text);
  const scanner s(symbols);
  auto offset = [&](size_t i) { return i < symbols.size() ? symbols[i].offset : text.size(); };
  for (size_t i = 0; i < s.size();) {
    size_t j = p == split_pattern::gpt2 ? next_gpt2(s, i) : next_llama(s, i, p == split_pattern::llama3);
    if (j <= i) j = i + 1;  // every symbol is matched by some branch; never loop
    out.push_back(text.substr(offset(i), offset(j) - offset(i)));
    i = j;
  }
}

bool nfc_quick_check(std::string_view text) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return true;
  for (const auto& sym : decode(text))
    if (sym.cp != k_invalid && in_ranges(k_nfc_unsafe_ranges, sym.cp)) return false;
  return true;
}

}  // namespace ptxbench::data
