#include <limits>
#include <string_view>

#include "evaluator/common/json_path.hpp"
#include "evaluator/common/utf8.hpp"

#include "agent/llm/wire_format.hpp"

namespace ptxbench::llm_detail {

namespace {
constexpr size_t max_quoted_body_chars = 300;

// A server's text for a cause: cut between characters, and valid UTF-8 (a
// cause is stored as text and read back by any SQLite client).
std::string shorten(const std::string& s) { return utf8_repaired(utf8_shortened(s, max_quoted_body_chars)); }

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at
// line 1, column 5: syntax error while parsing value - ..."; the byte offset
// is reported separately, so keep only the reason after the position.
std::string parse_reason(const std::string& what) {
  size_t column = what.find("column");
  size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}
}  // namespace

bool parse_json_object(const std::string& body, nlohmann::json& out, std::string& cause) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    cause = "empty body";
    return false;
  }
  // The bounded parser: a hostile server's reply must not recurse deep in
  // whatever later walks or dumps it.
  json_parse_outcome parsed = try_parse_json_bounded(body);
  if (parsed.ok && parsed.value.is_object()) {
    out = std::move(parsed.value);
    return true;
  }
  out = nlohmann::json();
  if (parsed.ok) cause = "response is not a JSON object";
  else if (parsed.too_deep) cause = parsed.message();
  else if (parsed.byte == 0) cause = "malformed JSON: " + shorten(parse_reason(parsed.error));  // 1e400
  else cause = "malformed JSON at byte " + std::to_string(parsed.byte) + ": " + parse_reason(parsed.error);
  // A document that stops mid-way was cut short in transit (a proxy, a
  // crashed server), which is worth saying: it is not the model's doing.
  if (parsed.cut_short) cause = "truncated body: " + cause;
  return false;
}

std::string error_message_of(const std::string& body) {
  nlohmann::json j;
  std::string ignored;
  if (parse_json_object(body, j, ignored)) {
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_string()) return shorten(e.get<std::string>());
      if (e.is_object() && e.contains("message") && e["message"].is_string())
        return shorten(e["message"].get<std::string>());
    }
    if (j.contains("message") && j["message"].is_string()) return shorten(j["message"].get<std::string>());
    if (j.contains("detail") && j["detail"].is_string()) return shorten(j["detail"].get<std::string>());
  }
  return shorten(body);
}

std::string join_url(const std::string& base_url, const std::string& suffix) {
  std::string_view base = base_url;
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  return std::string(base) + suffix;
}

bool wants_stream(const provider_config& c) {
  if (c.stream) return true;
  if (!c.extra.is_object()) return false;
  auto it = c.extra.find("stream");
  return it != c.extra.end() && it->is_boolean() && it->get<bool>();
}

void merge_extra(nlohmann::json& body, const nlohmann::json& extra) {
  if (extra.is_object() && !extra.empty()) body.merge_patch(extra);
}

int token_count(const nlohmann::json& parent, const char* key) {
  if (!parent.is_object() || !parent.contains(key)) return 0;
  const auto& v = parent[key];
  // Clamped: a count past int (or a float past it, whose conversion is
  // undefined) from a server is nonsense, not a reason to misbehave.
  constexpr double most = std::numeric_limits<int>::max();
  double count = 0;
  if (v.is_number_unsigned()) count = static_cast<double>(v.get<uint64_t>());
  else if (v.is_number_integer()) count = static_cast<double>(v.get<int64_t>());
  else if (v.is_number_float()) count = v.get<double>();
  if (!(count > 0)) return 0;
  return count >= most ? std::numeric_limits<int>::max() : static_cast<int>(count);
}

}  // namespace ptxbench::llm_detail
