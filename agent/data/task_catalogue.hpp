#pragma once
// What the data products know of a task beyond the id and family a run
// database stores with each trajectory: its level, variant and suites, read
// from a task directory (task ids are stable, docs/task-suite.md). A task the
// directory lacks has level 0 ("not given"), no variant and no suites.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench::data {

struct task_info {
  std::string family;
  int level = 0;  // 1-4; 0: not given
  std::map<std::string, std::string> variant;
  std::vector<std::string> suites;
};

using task_catalogue = std::map<std::string, task_info>;

task_catalogue make_catalogue(const std::vector<task>& tasks);
// The task's entry, or an empty one (level 0) when the catalogue lacks it.
const task_info& info_of(const task_catalogue& catalogue, const std::string& task_id);

// The variant as compact JSON text, axes in name order: {"dtype":"bf16","layout":"nt"}; "{}" without axes.
std::string variant_json(const std::map<std::string, std::string>& variant);
// "dtype=bf16 layout=nt" for tables; "-" without axes.
std::string variant_label(const std::map<std::string, std::string>& variant);
// "level 2", or "level not given" for 0.
std::string level_label(int level);

// The catalogue for `export` and `report`: the tasks of `dir` when given (an
// input_error when they do not load), else of ./tasks when it exists; when
// that fails to load, or there is none, an empty catalogue and `*warning` says
// why (levels and variants then read "not given").
task_catalogue load_catalogue(const std::optional<std::string>& dir, std::string* warning);

}  // namespace ptxbench::data
