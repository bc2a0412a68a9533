#include "evaluator/api/hidden_sizes.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "evaluator/api/index_inputs.hpp"
#include "evaluator/common/text.hpp"

namespace ptxbench {
namespace {

// One property of a size: its words and whether a size has it.
struct property {
  std::string words;
  std::function<bool(const size_point&)> holds;
};

std::vector<property> candidate_properties(const task& t, const size_point& s) {
  std::vector<property> out;
  for (const auto& [name, v] : s.values) {
    const std::string n = name;
    auto value = [n](const size_point& p) { return p.values.count(n) ? p.values.at(n) : 0; };
    if (v < 8) out.push_back({n + " is smaller than 8", [=](const size_point& p) { return value(p) < 8; }});
    else if (v < 64) out.push_back({n + " is smaller than 64", [=](const size_point& p) { return value(p) < 64; }});
    if (v % 2 != 0) {
      out.push_back({n + " is odd", [=](const size_point& p) { return value(p) % 2 != 0; }});
      continue;
    }
    for (int64_t m : {8, 16, 64, 128})
      if (v % m != 0) {
        out.push_back({n + " is not a multiple of " + std::to_string(m),
                       [=](const size_point& p) { return value(p) % m != 0; }});
        break;
      }
  }
  // The generated index inputs (index_inputs.hpp): an empty group, uneven lengths.
  auto has = [](const size_point& p, const char* a, const char* b) { return p.values.count(a) && p.values.count(b); };
  if (t.op.grouped && has(s, "G", "M")) {
    auto empty_group = [=](const size_point& p) {
      if (!has(p, "G", "M")) return false;
      try {
        auto rows = group_rows(p.values.at("G"), p.values.at("M"));
        return std::find(rows.begin(), rows.end(), 0) != rows.end();
      } catch (const std::exception&) {
        return false;
      }
    };
    if (empty_group(s)) out.push_back({"some groups are empty", empty_group});
  }
  if (t.op.varlen && has(s, "B", "S")) {
    auto uneven = [=](const size_point& p) {
      if (!has(p, "B", "S")) return false;
      try {
        for (int64_t l : varlen_lengths(p.values.at("B"), p.values.at("S")))
          if (l % 64 != 0) return true;
      } catch (const std::exception&) {
      }
      return false;
    };
    if (uneven(s)) out.push_back({"sequence lengths are not multiples of 64", uneven});
  }
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
  return out;
}

// The whole-number tokens of `text`.
std::set<int64_t> numbers_in(const std::string& text) {
  std::set<int64_t> out;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j - i <= 18) out.insert(std::stoll(text.substr(i, j - i)));
    i = j;
  }
  return out;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// Replaces whole-number occurrences of `value` (not part of a longer number,
// a name or a decimal) in `text`.
bool replace_number(std::string& text, const std::string& value, const std::string& by) {
  bool changed = false;
  for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at)) {
    const size_t end = at + value.size();
    const bool alone = (at == 0 || !word_char(text[at - 1])) &&
                       (end == text.size() || (!word_char(text[end]) ||
                                               (text[end] == '.' && (end + 1 == text.size() ||
                                                                     !std::isdigit(static_cast<unsigned char>(text[end + 1]))))));
    if (!alone) {
      at = end;
      continue;
    }
    text.replace(at, value.size(), by);
    at += by.size();
    changed = true;
  }
  return changed;
}

struct scrubber {
  std::vector<std::pair<std::string, std::string>> texts;  // describe_size -> label, longest first
  std::vector<std::string> values;                         // distinctive values as text

  void scrub(std::string& s) const {
    for (const auto& [from, to] : texts) s = replace_all(std::move(s), from, to);
    for (const auto& v : values) replace_number(s, v, "(hidden)");
  }
  // Strings and object keys (per-size maps such as other_math_share).
  void walk(nlohmann::json& j) const {
    if (j.is_string()) {
      std::string s = j.get<std::string>();
      scrub(s);
      j = s;
    } else if (j.is_array()) {
      for (auto& e : j) walk(e);
    } else if (j.is_object()) {
      nlohmann::json out = nlohmann::json::object();
      for (auto& [key, value] : j.items()) {
        std::string k = key;
        scrub(k);
        walk(value);
        out[k] = std::move(value);
      }
      j = std::move(out);
    }
  }
};

bool is_hidden_label(const std::string& size) { return size.rfind(k_hidden_size_prefix, 0) == 0; }

}  // namespace

std::vector<std::string> hidden_size_properties(const task& t, const size_point& s) {
  std::vector<property> all = candidate_properties(t, s);
  std::vector<std::string> telling, any;
  for (const auto& p : all) {
    any.push_back(p.words);
    bool shown_too = false;
    for (const auto& shown : t.sizes)
      if (!shown.hidden) shown_too = shown_too || p.holds(shown);
    if (!shown_too) telling.push_back(p.words);
  }
  std::vector<std::string>& out = telling.empty() ? any : telling;
  if (out.size() > 3) out.resize(3);
  return out;
}

std::string size_label(const task& t, const size_point& s) {
  if (!s.hidden) return describe_size(s);
  const auto props = hidden_size_properties(t, s);
  return props.empty() ? std::string(k_hidden_size_prefix) : std::string(k_hidden_size_prefix) + " where " + join_words(props);
}

std::string at_size(const std::string& label) {
  return is_hidden_label(label) ? "at " + label : "at size " + label;
}

// Below these, a number is as likely an ordinary figure (a register count, a
// latency, a percentage) as a size: it is not replaced in free text.
constexpr int64_t k_min_distinctive_value = 100;
constexpr int64_t k_min_distinctive_count = 10000;

// The numbers of size `s`: its values, and each tensor's element and byte
// counts (a message may quote an extent or a buffer's size); `all` keeps the
// small ones too.
std::set<int64_t> numbers_of(const task& t, const size_point& s, bool all) {
  std::set<int64_t> out;
  for (const auto& [k, v] : s.values)
    if (all || v >= k_min_distinctive_value) out.insert(v);
  for (const auto& ts : t.tensors) {
    try {
      const int64_t n = tensor_elements(ts, s), bytes = n * dtype_bytes(ts.type);
      if (all || n >= k_min_distinctive_count) out.insert(n);
      if (all || bytes >= k_min_distinctive_count) out.insert(bytes);
    } catch (const std::exception&) {
      // parse_task refused such sizes; nothing to add
    }
  }
  return out;
}

std::vector<int64_t> distinctive_hidden_values(const task& t) {
  std::set<int64_t> common = numbers_in(t.statement + " " + t.notes + " " + t.title + " " + t.constraints);
  for (int64_t label_number : {8, 16, 64, 128}) common.insert(label_number);
  for (const auto& s : t.sizes)
    if (!s.hidden) common.merge(numbers_of(t, s, true));
  std::set<int64_t> out;
  for (const auto& s : t.sizes)
    if (s.hidden)
      for (int64_t v : numbers_of(t, s, false))
        if (!common.count(v)) out.insert(v);
  return {out.begin(), out.end()};
}

void redact_hidden_sizes(evaluation_result& r, const task& t) {
  if (t.hidden_size_count() == 0) return;
  scrubber sc;
  for (const auto& s : t.sizes)
    if (s.hidden) {
      sc.texts.push_back({"at size " + describe_size(s), at_size(size_label(t, s))});
      sc.texts.push_back({describe_size(s), size_label(t, s)});
    }
  std::sort(sc.texts.begin(), sc.texts.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (int64_t v : distinctive_hidden_values(t)) sc.values.push_back(std::to_string(v));
  nlohmann::json j = to_json(r);
  sc.walk(j);
  r = evaluation_result_from_json(j);
  for (auto& c : r.correctness.outputs)
    if (c.hidden_size || is_hidden_label(c.size)) {
      c.hidden_size = true;
      c.elements = 0;
      c.nan_count = c.nan_count > 0 ? 1 : 0;
      c.untouched_count = c.untouched_count > 0 ? 1 : 0;
    }
  if (r.runtime && is_hidden_label(r.runtime->size)) r.runtime->hidden_size = true;
}

}  // namespace ptxbench
