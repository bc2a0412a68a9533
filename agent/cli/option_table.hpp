#pragma once
// Every option of every subcommand, once: its flag, environment variable,
// experiment-config key, type, bounds and help (as llama.cpp's server declares
// its arguments). The commands name the options they take (command_table.hpp);
// one reader (option_reader.hpp) checks a value the same way whether it comes
// from the command line, PTXBENCH_* or a config file; help, the README's
// command synopsis and docs/options.md are written from this table.
#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::cli {

enum class value_type {
  flag,     // no value on the command line; 1/true/yes/on or 0/false/no/off in the environment
  text,     // a non-empty string
  integer,  // a whole number within [min_integer, max_integer]
  number,   // a finite number within [min_number, max_number]
  choice,   // one of `choices`
  list,     // comma-separated items, repeatable; items are `item` values, none empty
  shard,    // i/n with 0 <= i < n <= max_integer
};

struct option {
  // Unique in the table: the flag, or "<command>.<flag>" where that command
  // gives a flag another meaning than the shared option of that name.
  std::string id;
  std::string flag;                  // long name without "--"
  std::vector<std::string> aliases;  // older long names still read
  char short_flag = 0;
  std::string env;                   // PTXBENCH_<ID>; empty for positional arguments
  // Where run's experiment config holds the value ("rounds", "llm.model";
  // shard: "shard_index" and "shard_count"); empty when the config has none.
  std::vector<std::string> config_keys;
  value_type type = value_type::text;
  value_type item = value_type::text;  // list items: text, integer or choice
  std::string value_name = "VALUE";
  int64_t min_integer = 0;
  int64_t max_integer = 0;
  double min_number = 0;
  double max_number = 0;
  std::vector<std::string> choices;
  // A rule of the value (or of each item) besides its type: the problem, or "" when it holds.
  std::string (*rule)(const std::string&) = nullptr;
  std::string help;
  std::string default_value;  // read like a given value; "" when none (the help says what absence means)
  bool positional = false;
  // run --resume: a config-backed option that may differ from the stored
  // experiment (where to find it, how fast to run it); any other one given
  // with another value than stored is refused.
  bool may_change_on_resume = false;

  // Builders, so that each row of the table reads as one declaration.
  option& integer(int64_t lo, int64_t hi);
  option& number(double lo, double hi);
  option& one_of(std::vector<std::string> values);
  option& list_of(value_type item_type);
  option& boolean();
  option& shard_of(int64_t max_count);
  option& config(std::string key);
  option& by_default(std::string value);
  option& short_name(char c);
  option& also(std::string alias);
  option& check(std::string (*r)(const std::string&));
  option& as_positional();
  option& changeable_on_resume();
};

// A row with its flag and variable derived from `id` ("history-k":
// --history-k, PTXBENCH_HISTORY_K; "export.history": --history,
// PTXBENCH_EXPORT_HISTORY). Type text until a builder says otherwise.
option make_option(std::string id, std::string value_name, std::string help);

// The whole table, in the order help lists it.
const std::vector<option>& all_options();
// The row of `id`; throws std::logic_error for an unknown id (a bug in a command's list).
const option& find_option(const std::string& id);

// Rules shared by rows: an http:// or https:// address.
std::string http_address_rule(const std::string& value);

}  // namespace ptxbench::cli
