#include "evaluator/api/size_rules.hpp"

#include "evaluator/api/expression.hpp"

namespace ptxbench {

std::map<std::string, size_rule> parse_size_rules(const json_reader& r, const std::map<std::string, int64_t>& names) {
  r.expect_object();
  std::map<std::string, size_rule> rules;
  for (auto it = r.json().begin(); it != r.json().end(); ++it) {
    if (!names.count(it.key())) r.fail_key(it.key(), "not a size of this task");
    json_reader e = r.at(it.key());
    e.expect_object();
    e.reject_unknown({"min", "max", "multiple_of", "equals"});
    size_rule rule;
    rule.min = e.get_int("min", 1);
    rule.max = e.get_int("max", 0);
    rule.multiple_of = e.get_int("multiple_of", 1);
    rule.equals = e.get_string("equals", "");
    if (rule.min < 1) e.fail_key("min", "must be at least 1 (sizes are positive)");
    if (rule.max != 0 && rule.max < rule.min) e.fail_key("max", "must be 0 (no bound) or at least min");
    if (rule.multiple_of < 1) e.fail_key("multiple_of", "must be at least 1");
    if (!rule.equals.empty()) {
      try {
        check_expression(rule.equals, names);
      } catch (const expression_error& err) {
        e.fail_key("equals", err.what());
      }
    }
    rules[it.key()] = rule;
  }
  return rules;
}

nlohmann::json size_rules_to_json(const std::map<std::string, size_rule>& rules) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, rule] : rules) {
    nlohmann::json e = {{"min", rule.min}};
    if (rule.max != 0) e["max"] = rule.max;
    if (rule.multiple_of != 1) e["multiple_of"] = rule.multiple_of;
    if (!rule.equals.empty()) e["equals"] = rule.equals;
    j[name] = e;
  }
  return j;
}

std::string size_rule_violation(const std::map<std::string, size_rule>& rules, const size_point& s) {
  for (const auto& [name, rule] : rules) {
    auto it = s.values.find(name);
    if (it == s.values.end()) return name + " is missing";
    const int64_t v = it->second;
    const std::string is = name + " = " + std::to_string(v);
    if (v < rule.min) return is + " is below the minimum " + std::to_string(rule.min);
    if (rule.max != 0 && v > rule.max) return is + " is above the maximum " + std::to_string(rule.max);
    if (v % rule.multiple_of != 0) return is + " is not a multiple of " + std::to_string(rule.multiple_of);
    if (!rule.equals.empty()) {
      int64_t want = 0;
      try {
        want = eval_int(rule.equals, s.values);
      } catch (const expression_error& e) {
        return name + ": " + e.what();
      }
      if (v != want) return is + " is not " + rule.equals + " = " + std::to_string(want);
    }
  }
  return "";
}

}  // namespace ptxbench
