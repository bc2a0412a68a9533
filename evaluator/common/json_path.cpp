#include "evaluator/common/json_path.hpp"

#include <algorithm>
#include <limits>

#include "evaluator/common/utf8.hpp"

namespace ptxbench {

namespace {
const char* type_name(const nlohmann::json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "boolean";
  if (j.is_number_integer() || j.is_number_unsigned()) return "integer";
  if (j.is_number()) return "number";
  if (j.is_string()) return "string";
  if (j.is_array()) return "array";
  return "object";
}
struct too_deep_error {};
}  // namespace

std::string json_parse_outcome::message() const {
  if (ok) return "";
  if (too_deep) return "JSON nested deeper than " + std::to_string(k_max_json_depth) + " levels";
  return "invalid JSON: " + error;
}

json_parse_outcome try_parse_json_bounded(const std::string& text) {
  json_parse_outcome out;
  // The callback sees every value with its depth; stopping the parse at the
  // first value past the bound keeps the partial tree small.
  auto bound = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > k_max_json_depth) throw too_deep_error{};
    return true;
  };
  try {
    out.value = nlohmann::json::parse(text, bound);
    out.ok = true;
  } catch (const too_deep_error&) {
    out.too_deep = true;
  } catch (const nlohmann::json::parse_error& e) {
    out.byte = e.byte;
    out.error = utf8_repaired(utf8_shortened(e.what(), 400));  // it quotes the text's last token
    out.cut_short = e.byte > text.size();
  } catch (const nlohmann::json::exception& e) {
    // out_of_range for a number past double ("1e400"), found by fuzz_manifest.
    out.error = utf8_repaired(utf8_shortened(e.what(), 400));
  }
  if (!out.ok) out.value = nullptr;
  return out;
}

nlohmann::json parse_json_bounded(const std::string& text, const std::string& what) {
  json_parse_outcome r = try_parse_json_bounded(text);
  if (r.ok) return std::move(r.value);
  if (r.too_deep) throw input_error(what + ": " + r.message());
  throw input_error(what + ": " + r.message());
}

void json_reader::fail(const std::string& message) const {
  std::string where = m_source.empty() ? m_path : m_source + ": " + m_path;
  throw input_error(where + ": " + message);
}

void json_reader::fail_key(const std::string& key, const std::string& message) const {
  std::string where = m_path + "." + key;
  if (!m_source.empty()) where = m_source + ": " + where;
  throw input_error(where + ": " + message);
}

void json_reader::expect_object() const {
  if (!m_json.is_object()) fail(std::string("expected an object, found ") + type_name(m_json));
}

void json_reader::expect_array() const {
  if (!m_json.is_array()) fail(std::string("expected an array, found ") + type_name(m_json));
}

bool json_reader::has(const std::string& key) const {
  return m_json.is_object() && m_json.contains(key) && !m_json.at(key).is_null();
}

json_reader json_reader::at(const std::string& key) const {
  expect_object();
  if (!m_json.contains(key)) fail_key(key, "missing");
  return json_reader(m_json.at(key), m_path + "." + key, m_source);
}

json_reader json_reader::at(size_t index) const {
  expect_array();
  if (index >= m_json.size()) fail("index " + std::to_string(index) + " out of range");
  return json_reader(m_json.at(index), m_path + "[" + std::to_string(index) + "]", m_source);
}

std::string json_reader::get_string(const std::string& key) const {
  auto v = at(key);
  if (!v.json().is_string()) v.fail(std::string("expected a string, found ") + type_name(v.json()));
  return v.json().get<std::string>();
}

std::string json_reader::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

int64_t json_reader::get_int(const std::string& key) const {
  auto v = at(key);
  const auto& j = v.json();
  if (j.is_number_unsigned()) {
    // 4294967297 or 2^64-1 must not wrap into a small or negative count.
    if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      v.fail("integer " + j.dump() + " is out of range");
    return j.get<int64_t>();
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_float()) {
    double d = j.get<double>();
    // Converting a double outside [-2^63, 2^63) to int64 is undefined.
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
      v.fail("number " + j.dump() + " is out of the integer range");
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  v.fail(std::string("expected an integer, found ") + type_name(j));
}

int64_t json_reader::get_int(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}

double json_reader::get_number(const std::string& key) const {
  auto v = at(key);
  if (!v.json().is_number()) v.fail(std::string("expected a number, found ") + type_name(v.json()));
  return v.json().get<double>();
}

double json_reader::get_number(const std::string& key, double fallback) const {
  return has(key) ? get_number(key) : fallback;
}

bool json_reader::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  auto v = at(key);
  if (!v.json().is_boolean()) v.fail(std::string("expected true or false, found ") + type_name(v.json()));
  return v.json().get<bool>();
}

std::vector<std::string> json_reader::get_strings(const std::string& key) const {
  auto v = at(key);
  v.expect_array();
  std::vector<std::string> out;
  for (size_t i = 0; i < v.json().size(); ++i) {
    auto e = v.at(i);
    if (!e.json().is_string()) e.fail(std::string("expected a string, found ") + type_name(e.json()));
    out.push_back(e.json().get<std::string>());
  }
  return out;
}

void json_reader::reject_unknown(const std::vector<std::string>& known) const {
  expect_object();
  for (auto it = m_json.begin(); it != m_json.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      // The key is a client's or a model's text: named in part, so an error never echoes megabytes.
      fail_key(utf8_shortened(it.key(), 100), "unknown field (known: " + list + ")");
    }
  }
}

}  // namespace ptxbench
