#include "agent/cli/option_table.hpp"

#include <cctype>
#include <map>
#include <stdexcept>

#include "agent/cli/option_rows.hpp"

namespace ptxbench::cli {

option& option::integer(int64_t lo, int64_t hi) {
  if (type != value_type::list) type = value_type::integer;
  else item = value_type::integer;
  min_integer = lo;
  max_integer = hi;
  if (value_name == "VALUE") value_name = "N";
  return *this;
}

option& option::number(double lo, double hi) {
  type = value_type::number;
  min_number = lo;
  max_number = hi;
  return *this;
}

option& option::one_of(std::vector<std::string> values) {
  if (type != value_type::list) type = value_type::choice;
  else item = value_type::choice;
  choices = std::move(values);
  return *this;
}

option& option::list_of(value_type item_type) {
  type = value_type::list;
  item = item_type;
  return *this;
}

option& option::boolean() {
  type = value_type::flag;
  value_name.clear();
  return *this;
}

option& option::shard_of(int64_t max_count) {
  type = value_type::shard;
  min_integer = 1;
  max_integer = max_count;
  return *this;
}

option& option::config(std::string key) {
  config_keys.push_back(std::move(key));
  return *this;
}

option& option::by_default(std::string value) {
  default_value = std::move(value);
  return *this;
}

option& option::short_name(char c) {
  short_flag = c;
  return *this;
}

option& option::also(std::string alias) {
  aliases.push_back(std::move(alias));
  return *this;
}

option& option::check(std::string (*r)(const std::string&)) {
  rule = r;
  return *this;
}

option& option::as_positional() {
  positional = true;
  env.clear();
  return *this;
}

option& option::changeable_on_resume() {
  may_change_on_resume = true;
  return *this;
}

option make_option(std::string id, std::string value_name, std::string help) {
  option o;
  const auto dot = id.find('.');
  o.flag = dot == std::string::npos ? id : id.substr(dot + 1);
  o.env = "PTXBENCH_";
  for (char c : id) o.env += (c == '-' || c == '.') ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  o.id = std::move(id);
  o.value_name = std::move(value_name);
  o.help = std::move(help);
  return o;
}

const std::vector<option>& all_options() {
  static const std::vector<option> table = [] {
    std::vector<option> rows;
    for (auto* part : {&experiment_option_rows, &data_option_rows, &tool_option_rows})
      for (auto& row : (*part)()) rows.push_back(std::move(row));
    return rows;
  }();
  return table;
}

const option& find_option(const std::string& id) {
  static const std::map<std::string, const option*> index = [] {
    std::map<std::string, const option*> m;
    for (const auto& o : all_options()) m.emplace(o.id, &o);
    return m;
  }();
  auto it = index.find(id);
  if (it == index.end()) throw std::logic_error("no option '" + id + "' in the option table");
  return *it->second;
}

std::string http_address_rule(const std::string& value) {
  if (value.rfind("http://", 0) == 0 || value.rfind("https://", 0) == 0) {
    if (value.find_first_not_of("/", value.find(':') + 1) != std::string::npos) return "";
  }
  return "expected an http:// or https:// address, not '" + value + "'";
}

}  // namespace ptxbench::cli
