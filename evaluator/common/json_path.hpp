#pragma once
// Helpers that read typed fields from JSON and throw input_error naming the
// JSON path of a missing or mistyped field ("tasks/x.json: $.sizes[1].M: expected integer").
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace ptxbench {

// A user-supplied document (task, manifest, config, reply) is malformed.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Nesting bound of every JSON document ptxbench reads from a user or a model:
// deeper documents are refused at parse time, so that nothing downstream
// (serialising, comparing, destroying) recurses past it.
inline constexpr int k_max_json_depth = 64;

// JSON text of `j` for an answer, a log line, a file or a database row:
// invalid UTF-8 in a string (a model's or a client's bytes) becomes U+FFFD
// instead of a throw that would lose the whole text.
// Inline: the store and the service use it without linking the evaluator's API.
inline std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The one parser of JSON text that a model, a server or a client wrote (and
// of the user's files): nesting past k_max_json_depth stops the parse at that
// level, so a document of a million levels costs microseconds and nothing
// downstream recurses past the bound. Never throws for bad text.
struct json_parse_outcome {
  nlohmann::json value;    // the document when ok, else null
  bool ok = false;
  bool too_deep = false;   // nested deeper than k_max_json_depth
  bool cut_short = false;  // the text ended inside the document (a body cut in transit)
  size_t byte = 0;         // where the text stopped being JSON (nlohmann's count), when not ok
  std::string error;       // nlohmann's message when not ok and not too deep: "[json.exception.parse_error.101]
                           // parse error at line 1, column 5: syntax error while parsing value - ..."
  // "JSON nested deeper than 64 levels" or "invalid JSON: <error>"; "" when ok.
  std::string message() const;
};
json_parse_outcome try_parse_json_bounded(const std::string& text);

// Parses `text`; throws input_error "<what>: invalid JSON: ..." or
// "<what>: JSON nested deeper than 64 levels".
nlohmann::json parse_json_bounded(const std::string& text, const std::string& what);

class json_reader {
 public:
  json_reader(const nlohmann::json& j, std::string path, std::string source = "")
      : m_json(j), m_path(std::move(path)), m_source(std::move(source)) {}

  const nlohmann::json& json() const { return m_json; }
  const std::string& path() const { return m_path; }
  bool has(const std::string& key) const;
  json_reader at(const std::string& key) const;  // throws if missing
  json_reader at(size_t index) const;
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  int64_t get_int(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_number(const std::string& key) const;
  double get_number(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::vector<std::string> get_strings(const std::string& key) const;
  void expect_object() const;
  void expect_array() const;
  // Throws for keys that are not in `known` (catches typos such as "shared_byte").
  void reject_unknown(const std::vector<std::string>& known) const;
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_key(const std::string& key, const std::string& message) const;

 private:
  const nlohmann::json& m_json;
  std::string m_path;
  std::string m_source;
};

}  // namespace ptxbench
