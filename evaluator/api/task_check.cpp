#include "evaluator/api/task_check.hpp"

#include <map>
#include <set>

#include "evaluator/api/hidden_sizes.hpp"

namespace ptxbench {
namespace {

// Whether rule `r` allows values that are not multiples of 128; then some
// hidden size must have one (TMA's out-of-bounds fill is part of the skill).
bool allows_non_tile(const size_rule& r) { return r.equals.empty() && r.multiple_of % 128 != 0 && r.max != r.min; }

}  // namespace

std::string judged_at(const task& t) {
  return t.runs_on_hopper ? "the GPU" : "compile and SASS only (" + t.arch + ")";
}

std::vector<std::string> task_problems(const task& t) {
  std::vector<std::string> p;
  auto add = [&](const std::string& what) { p.push_back(t.id + ": " + what); };
  if (t.level < 1 || t.level > 4) add("no level (1 to 4)");
  if (t.variant.empty()) add("no variant (its axis values)");
  if (t.constraints.empty()) add("no constraints (the sentence the prompt shows about the sizes)");
  if (t.suites.empty()) add("in no suite");
  int timed = 0;
  for (const auto& s : t.sizes) timed += s.timed;
  if (timed != 1) add("needs exactly one timed size, has " + std::to_string(timed));
  if (t.hidden_size_count() == 0) add("has no hidden size");
  for (const auto& name : t.size_names()) {
    auto rule = t.size_rules.find(name);
    if (rule == t.size_rules.end()) {
      add("size " + name + " has no size rule");
      continue;
    }
    if (!allows_non_tile(rule->second)) continue;
    bool exercised = false;
    for (const auto& s : t.sizes)
      if (s.hidden && s.values.at(name) % 128 != 0) exercised = true;
    if (!exercised) add("the rules allow " + name + " not a multiple of 128, but no hidden size has one");
  }
  for (const auto& s : t.sizes) {
    try {
      if (!(task_flops(t, s) > 0)) add("no FLOPs at " + size_label(t, s));
    } catch (const std::exception& e) {
      add("flops at " + size_label(t, s) + ": " + e.what());
    }
  }
  return p;
}

std::vector<std::string> suite_problems(const std::vector<task>& tasks) {
  std::vector<std::string> p;
  std::map<std::pair<std::string, int>, std::vector<std::string>> core;
  std::set<std::pair<std::string, int>> runnable;
  for (const auto& t : tasks) {
    for (auto& x : task_problems(t)) p.push_back(std::move(x));
    if (t.runs_on_hopper) runnable.insert({t.family, t.level});
    for (const auto& s : t.suites)
      if (s == "core") core[{t.family, t.level}].push_back(t.id);
  }
  // core: one task per family x level that the GPU judges, quick to run.
  for (const auto& key : runnable) {
    const auto it = core.find(key);
    const std::string where = "suite core: family " + key.first + " level " + std::to_string(key.second);
    if (it == core.end()) p.push_back(where + " has no task");
    else if (it->second.size() > 1) p.push_back(where + " has " + std::to_string(it->second.size()) + " tasks");
  }
  for (const auto& [key, ids] : core)
    if (!runnable.count(key)) p.push_back("suite core: " + ids.front() + " is not judged on the GPU");
  return p;
}

}  // namespace ptxbench
