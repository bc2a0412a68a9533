#include "agent/store/ptx_fingerprint.hpp"

#include <cctype>
#include <cstdio>
#include <map>

#include "evaluator/common/hash.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// Text without // and /* */ comments, whitespace runs as one space.
std::string strip(const std::string& text) {
  std::string out;
  bool space = false;
  // Characters compared one by one, not with string::compare at every byte:
  // the manifest fingerprinted may be a megabyte of a model's text.
  const auto at = [&](size_t i, char a, char b) { return text[i] == a && i + 1 < text.size() && text[i + 1] == b; };
  for (size_t i = 0; i < text.size(); ++i) {
    if (at(i, '/', '/')) {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      space = true;
      continue;
    }
    if (at(i, '/', '*')) {
      size_t end = text.find("*/", i + 2);
      if (end == std::string::npos) break;
      i = end + 1;
      space = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += text[i];
  }
  return out;
}

}  // namespace

std::string normalise_ptx(const std::string& ptx) {
  const std::string text = strip(ptx);
  std::map<std::string, std::map<std::string, int>> numbering;  // prefix -> name -> new number
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const bool reg = text[i] == '%' && i + 1 < text.size() && std::isalpha(static_cast<unsigned char>(text[i + 1]));
    const bool label = text.compare(i, 3, "$L_") == 0;
    if (!reg && !label) {
      out += text[i++];
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && word_char(text[end])) ++end;
    const std::string name = text.substr(i, end - i);
    // The prefix is the name without its trailing digits; a name with no
    // digits (%tid, %ctaid, %laneid) is a special register and kept as is.
    size_t digits = name.size();
    while (digits > 1 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
    if (digits == name.size() || (reg && text.compare(end, 1, "<") == 0)) {
      out += name;
    } else {
      const std::string prefix = name.substr(0, digits);
      auto& numbers = numbering[prefix];
      auto [it, fresh] = numbers.emplace(name, static_cast<int>(numbers.size()));
      out += prefix + std::to_string(it->second);
    }
    i = end;
  }
  return out;
}

std::string candidate_fingerprint(const std::string& ptx, const std::string& manifest) {
  if (ptx.empty()) return "";
  // The manifest is the model's text, fingerprinted before the turn is stored:
  // parsed with the bounded parser (a million levels of nesting overflowed the
  // stack here), and taken as text when it is no JSON the evaluator would read.
  const json_parse_outcome j = try_parse_json_bounded(manifest);
  const std::string man = j.ok ? json_text(j.value) : strip(manifest);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(fnv1a(man, fnv1a(normalise_ptx(ptx) + '\x1f'))));
  return hex;
}

}  // namespace ptxbench
