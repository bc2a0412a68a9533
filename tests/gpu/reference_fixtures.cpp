#include "tests/gpu/reference_fixtures.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace ptxbench {

std::vector<task> load_task_array(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<task> tasks;
  for (size_t i = 0; i < j.size(); ++i) tasks.push_back(parse_task(j[i], path, "$[" + std::to_string(i) + "]"));
  return tasks;
}

const std::vector<task>& reference_fixtures() {
  // $PTXBENCH_SOURCE_DIR first: on a GPU machine the tree is not where it was built.
  const char* env = std::getenv("PTXBENCH_SOURCE_DIR");
  static const std::vector<task> tasks = load_task_array(std::string(env && *env ? env : PTXBENCH_SOURCE_DIR) +
                                                         "/tests/fixtures/reference_tasks.json");
  return tasks;
}

}  // namespace ptxbench
