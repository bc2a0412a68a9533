#include "agent/data/task_catalogue.hpp"

#include <nlohmann/json.hpp>

#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {

task_catalogue make_catalogue(const std::vector<task>& tasks) {
  task_catalogue out;
  for (const auto& t : tasks) out[t.id] = {t.family, t.level, t.variant, t.suites};
  return out;
}

const task_info& info_of(const task_catalogue& catalogue, const std::string& task_id) {
  static const task_info none;
  auto it = catalogue.find(task_id);
  return it == catalogue.end() ? none : it->second;
}

std::string variant_json(const std::map<std::string, std::string>& variant) {
  return nlohmann::json(variant).dump();  // a std::map: keys already in order
}

std::string variant_label(const std::map<std::string, std::string>& variant) {
  std::string out;
  for (const auto& [axis, value] : variant) out += (out.empty() ? "" : " ") + axis + "=" + value;
  return out.empty() ? "-" : out;
}

std::string level_label(int level) { return level > 0 ? "level " + std::to_string(level) : "level not given"; }

task_catalogue load_catalogue(const std::optional<std::string>& dir, std::string* warning) {
  if (dir) {
    if (!std::filesystem::is_directory(*dir)) throw input_error("--tasks-dir " + *dir + " is not a directory");
    return make_catalogue(load_task_dir(*dir));
  }
  if (!std::filesystem::is_directory("tasks")) {
    if (warning) *warning = "no ./tasks directory (--tasks-dir names one): task levels and variants read 'not given'";
    return {};
  }
  try {
    return make_catalogue(load_task_dir("tasks"));
  } catch (const std::exception& e) {
    if (warning) *warning = std::string("./tasks did not load (") + e.what() + "): task levels and variants read 'not given'";
    return {};
  }
}

}  // namespace ptxbench::data
