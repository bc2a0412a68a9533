#pragma once
// The machine-checked form of a task's constraints ("size_rules" in a task
// file, docs/task-suite.md): per size name a minimum, a maximum, a multiple
// and an equality with an expression over the other sizes ("H": {"equals":
// "4*HKV"}). parse_task checks every size, public or hidden, against them.
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "evaluator/common/json_path.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {

// Parses the object at `r`; every key must be one of `names` (the task's size
// names) and an `equals` expression may use only those names. Throws
// input_error with the JSON path of the bad field.
std::map<std::string, size_rule> parse_size_rules(const json_reader& r, const std::map<std::string, int64_t>& names);
nlohmann::json size_rules_to_json(const std::map<std::string, size_rule>& rules);

// The first rule size `s` breaks, as "N = 100 is not a multiple of 8", or ""
// when it obeys them all. For the task's author (tasks check, load errors):
// it names the numbers.
std::string size_rule_violation(const std::map<std::string, size_rule>& rules, const size_point& s);

}  // namespace ptxbench
