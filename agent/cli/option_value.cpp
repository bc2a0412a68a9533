// The checks of one option value. Text (command line, environment) and JSON
// (a config file) are first made a typed value, then pass the same
// check_scalar: bounds, choices and the row's rule live in one place.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "agent/cli/option_reader.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& problem) {
  throw input_error(source + ": " + problem);
}

// 3600000 rather than 3.6e+06; fractions as %g.
std::string number_text(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<int64_t>(v));
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string choices_text(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return out;
}

// Bounds, choices and the rule of one typed scalar of type `type` (the row's
// type, or its item type for a list).
void check_scalar(const option& o, value_type type, const json& v, const std::string& source) {
  if (type == value_type::integer) {
    const int64_t n = v.get<int64_t>();
    if (n < o.min_integer || n > o.max_integer)
      fail(source, std::to_string(n) + " is out of range (" + std::to_string(o.min_integer) + " to " +
                       std::to_string(o.max_integer) + ")");
  } else if (type == value_type::number) {
    const double x = v.get<double>();
    if (!(x >= o.min_number && x <= o.max_number))
      fail(source, number_text(x) + " is out of range (" + number_text(o.min_number) + " to " +
                       number_text(o.max_number) + ")");
  } else if (type == value_type::choice) {
    const auto& s = v.get_ref<const std::string&>();
    if (std::find(o.choices.begin(), o.choices.end(), s) == o.choices.end())
      fail(source, "expected " + choices_text(o.choices) + ", not '" + s + "'");
  } else if (type == value_type::text) {
    if (v.get_ref<const std::string&>().empty()) fail(source, "an empty value");
  }
  if (o.rule && v.is_string())
    if (std::string problem = o.rule(v.get_ref<const std::string&>()); !problem.empty()) fail(source, problem);
}

json scalar_from_text(const option& o, value_type type, const std::string& text, const std::string& source) {
  json v;
  if (type == value_type::integer) {
    int64_t n = 0;
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), n);
    if (parsed.ec == std::errc::result_out_of_range)
      fail(source, text + " is out of range (" + std::to_string(o.min_integer) + " to " +
                       std::to_string(o.max_integer) + ")");
    if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size())
      fail(source, "not an integer: '" + text + "'");
    v = n;
  } else if (type == value_type::number) {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x))
      fail(source, "not a number: '" + text + "'");
    v = x;
  } else {
    v = text;
  }
  check_scalar(o, type, v, source);
  return v;
}

json scalar_from_json(const option& o, value_type type, const json& j, const std::string& source) {
  if (type == value_type::integer) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(INT64_MAX))
      fail(source, j.dump() + " is out of range (" + std::to_string(o.min_integer) + " to " +
                       std::to_string(o.max_integer) + ")");
    if (!j.is_number_integer()) fail(source, std::string("expected an integer, found ") + j.type_name());
  } else if (type == value_type::number) {
    if (!j.is_number()) fail(source, std::string("expected a number, found ") + j.type_name());
  } else if (type == value_type::flag) {
    if (!j.is_boolean()) fail(source, std::string("expected true or false, found ") + j.type_name());
  } else if (!j.is_string()) {
    fail(source, std::string("expected a string, found ") + j.type_name());
  }
  json v = type == value_type::number ? json(j.get<double>()) : j;
  check_scalar(o, type, v, source);
  return v;
}

bool flag_from_text(const std::string& text, const std::string& source) {
  std::string v;
  for (char c : text) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  fail(source, "expected 1, true, yes, on, 0, false, no or off, not '" + text + "'");
}

json shard_from_text(const option& o, const std::string& text, const std::string& source) {
  const auto slash = text.find('/');
  int64_t index = -1;
  int64_t count = 0;
  auto whole = [](const std::string& s, int64_t& out) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  if (slash == std::string::npos || !whole(text.substr(0, slash), index) || !whole(text.substr(slash + 1), count) ||
      count < o.min_integer || count > o.max_integer || index < 0 || index >= count)
    fail(source, "expected I/N with 0 <= I < N <= " + std::to_string(o.max_integer) + " (e.g. 0/8), not '" + text +
                     "'");
  return json::array({index, count});
}

}  // namespace

json value_from_text(const option& o, const std::string& text, const std::string& source) {
  switch (o.type) {
    case value_type::flag:
      return flag_from_text(text, source);
    case value_type::shard:
      return shard_from_text(o, text, source);
    case value_type::list: {
      json items = json::array();
      size_t start = 0;
      for (;;) {
        const size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) fail(source, "an empty item in '" + text + "'");
        items.push_back(scalar_from_text(o, o.item, item, source));
        if (comma == std::string::npos) return items;
        start = comma + 1;
      }
    }
    default:
      return scalar_from_text(o, o.type, text, source);
  }
}

json value_from_json(const option& o, const json& v, const std::string& source) {
  if (o.type == value_type::shard) fail(source, "a shard is two config keys, not one value");  // a bug in a caller
  if (o.type != value_type::list) return scalar_from_json(o, o.type, v, source);
  // A list may be written as its one item ("url": "http://...").
  if (!v.is_array()) return json::array({scalar_from_json(o, o.item, v, source)});
  if (v.empty()) fail(source, "an empty list (leave the key out for the default)");
  json items = json::array();
  for (size_t i = 0; i < v.size(); ++i)
    items.push_back(scalar_from_json(o, o.item, v[i], source + "[" + std::to_string(i) + "]"));
  return items;
}

}  // namespace ptxbench::cli
