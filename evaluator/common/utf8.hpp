#pragma once
// UTF-8 for text that a model or a client wrote and that ends up in JSON or
// SQLite: nlohmann::json's dump() throws on invalid UTF-8 and Python's sqlite3
// cannot read such a row, so such text is cut at character boundaries, quoted
// a whole character at a time, and repaired with U+FFFD.
#include <cstdio>
#include <string>

namespace ptxbench {

// Bytes of the well-formed UTF-8 character at `pos` (1 to 4), 0 when the
// bytes there are no character (a stray continuation byte, an overlong or
// surrogate form, a sequence cut short).
inline size_t utf8_char_length(const std::string& s, size_t pos) {
  if (pos >= s.size()) return 0;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b = byte(pos);
  if (b < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (pos + n > s.size() || byte(pos + 1) < lo || byte(pos + 1) > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if ((byte(pos + i) & 0xC0) != 0x80) return 0;
  return n;
}

// The largest cut at most `n` bytes into `s` that splits no character.
inline size_t utf8_boundary(const std::string& s, size_t n) {
  if (n >= s.size()) return s.size();
  size_t cut = n;
  while (cut > 0 && n - cut < 3 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80 ? n : cut;  // not UTF-8 there anyway
}

// `s` for a message: whole when at most `n` bytes, else cut between
// characters and marked "...".
inline std::string utf8_shortened(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, utf8_boundary(s, n)) + "...";
}

// The character at `pos` for a message: itself when well-formed, else its
// first byte escaped ("\xc3").
inline std::string utf8_quoted_char(const std::string& s, size_t pos) {
  if (const size_t n = utf8_char_length(s, pos); n > 0) return s.substr(pos, n);
  if (pos >= s.size()) return "";
  char escaped[8];
  std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(s[pos]));
  return escaped;
}

// Whether every byte of `s` is part of a well-formed character.
inline bool utf8_valid(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_char_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// `s` with every byte that is no part of a well-formed character replaced by U+FFFD.
inline std::string utf8_repaired(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_char_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace ptxbench
