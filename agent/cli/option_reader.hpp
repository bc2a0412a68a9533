#pragma once
// The one reader of option values. A value comes from the command line, else
// from the option's PTXBENCH_* variable (an empty variable counts as unset),
// else (run only) from the experiment config; each source goes through the
// same checks of the option's row (type, bounds, choices, rule), and a bad
// value is an input_error naming its source: "--rounds: ...",
// "PTXBENCH_ROUNDS: ...", "configs/x.json: $.rounds: ...".
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/cli/option_table.hpp"

namespace ptxbench::cli {

enum class value_origin { command_line, environment, config_file };

struct given_value {
  nlohmann::json value;  // typed: bool, string, integer, number, array, or [i, n] for a shard
  value_origin origin = value_origin::command_line;
  std::string source;  // "--rounds", "PTXBENCH_ROUNDS", or "<file>: $.rounds"
  std::string text;    // as written on the command line or in the environment
};

// The options of one command, as given. Asking for an option the command does
// not declare is a bug (std::logic_error), so code and table cannot drift.
class option_values {
 public:
  explicit option_values(std::vector<const option*> declared) : m_declared(std::move(declared)) {}

  bool has(const std::string& id) const;  // given on the command line or in the environment
  const given_value* given(const std::string& id) const;
  bool flag(const std::string& id) const;
  // The given value, else the row's default, else nullopt.
  std::optional<std::string> text_if(const std::string& id) const;
  std::optional<int64_t> integer_if(const std::string& id) const;
  std::optional<double> number_if(const std::string& id) const;
  // Only a value given (command line or environment), never the default.
  std::optional<std::string> given_text(const std::string& id) const;
  // The same for an option that has a default or is required: absent is a bug (std::logic_error).
  std::string text(const std::string& id) const;
  int64_t integer(const std::string& id) const;
  std::vector<std::string> list(const std::string& id) const;  // empty when not given
  std::vector<int64_t> integers(const std::string& id) const;  // a list of integers; empty when not given
  const std::vector<const option*>& declared() const { return m_declared; }
  const std::map<std::string, given_value>& all_given() const { return m_given; }

  void set(const std::string& id, given_value v);
  void append(const std::string& id, const nlohmann::json& items);  // more items of a list already given
  bool help_requested = false;

 private:
  const option& row(const std::string& id) const;
  std::optional<nlohmann::json> value_or_default(const std::string& id) const;

  std::vector<const option*> m_declared;
  std::map<std::string, given_value> m_given;
};

// Reads argv[1..argc) for the options `ids` (and -h/--help), then the
// environment for those not given. `program` names the command in messages
// ("ptxbench run"). Throws input_error for an unknown option, a missing or
// extra value, an option given twice (lists may repeat) or a bad value.
option_values read_options(const std::string& program, const std::vector<std::string>& ids, int argc,
                           const char* const* argv);

// One value written as text (command line, environment, a row's default), checked.
nlohmann::json value_from_text(const option& o, const std::string& text, const std::string& source);
// One value from a JSON document (a config file), checked by the same rules.
nlohmann::json value_from_json(const option& o, const nlohmann::json& v, const std::string& source);

}  // namespace ptxbench::cli
