#include "evaluator/pool/local_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "evaluator/common/json_path.hpp"
#include "evaluator/compile/compile.hpp"

namespace ptxbench {
namespace {

// $name as an integer in [lo, hi]; `fallback` when unset or not one.
int env_count(const char* name, int lo, int hi, int fallback) {
  if (const char* env = std::getenv(name); env && *env) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end && *end == '\0' && v >= lo && v <= hi) return int(v);
  }
  return fallback;
}

}  // namespace

std::string find_worker(const local_evaluator_options& o) {
  if (!o.worker_path.empty()) return o.worker_path;
  if (const char* env = std::getenv("PTXBENCH_WORKER"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / "ptxbench-worker";
    if (std::filesystem::exists(beside)) return beside.string();
  }
#ifdef PTXBENCH_DEFAULT_WORKER
  if (std::filesystem::exists(PTXBENCH_DEFAULT_WORKER)) return PTXBENCH_DEFAULT_WORKER;
#endif
  return ec ? std::string("ptxbench-worker") : (self.parent_path() / "ptxbench-worker").string();
}

std::vector<std::string> visible_device_ids(int count) {
  std::vector<std::string> ids;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES"); env && *env) {
    std::string list = env, item;
    for (size_t start = 0; start <= list.size();) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      item = list.substr(start, comma - start);
      if (!item.empty()) ids.push_back(item);
      start = comma + 1;
    }
  }
  for (int d = int(ids.size()); d < count; ++d) ids.push_back(std::to_string(d));
  ids.resize(size_t(count));
  return ids;
}

// Spare counting workers kept per GPU: the option, else $PTXBENCH_SPARE_WORKERS, else 6
// (a candidate's counting passes take one each, two or more; a spare takes about half a
// second to start; with two main workers four spares were too few to keep up on the H200).
int spare_workers(const local_evaluator_options& o) {
  return o.spare_workers >= 0 ? o.spare_workers : env_count("PTXBENCH_SPARE_WORKERS", 0, 16, 6);
}

// Main workers per GPU: the option, else $PTXBENCH_MAIN_WORKERS, else 2.
int main_workers(const local_evaluator_options& o) {
  return o.main_workers >= 1 ? std::min(o.main_workers, 8) : env_count("PTXBENCH_MAIN_WORKERS", 1, 8, 2);
}

// CUDA_DEVICE_MAX_CONNECTIONS of the spares: the option, else
// $PTXBENCH_SPARE_CONNECTIONS, else 1 (0: the environment's own).
int spare_connections(const local_evaluator_options& o) {
  return o.spare_connections >= 0 ? std::min(o.spare_connections, 32) : env_count("PTXBENCH_SPARE_CONNECTIONS", 0, 32, 1);
}

bool speculative_counting(const local_evaluator_options& o) {
  if (o.speculative_counting >= 0) return o.speculative_counting != 0;
  if (const char* env = std::getenv("PTXBENCH_SPECULATIVE_COUNTING"); env && *env) return std::string(env) != "0";
  return true;
}

hw_check_policy hw_check(const local_evaluator_options& o) {
  if (o.hw_check >= 0) {
    if (o.hw_check > 2)
      throw input_error("local_evaluator_options::hw_check must be -1, 0, 1 or 2, not " + std::to_string(o.hw_check));
    return hw_check_policy(o.hw_check);
  }
  if (const char* env = std::getenv("PTXBENCH_HW_CHECK"); env && *env) {
    const std::string v = env;
    if (v == "0" || v == "1" || v == "2") return hw_check_policy(v[0] - '0');
    if (v == "timers") return hw_check_policy::timer_readers;
    throw input_error("PTXBENCH_HW_CHECK must be 0 (off), 1 (every candidate) or timers (the candidates whose PTX "
                      "reads a clock or timer), not '" + v + "'");
  }
  return hw_check_policy::timer_readers;
}

bool wants_hw_check(hw_check_policy policy, const std::string& ptx) {
  switch (policy) {
    case hw_check_policy::off: return false;
    case hw_check_policy::every_candidate: return true;
    case hw_check_policy::timer_readers: return !ptx_timer_read_of(ptx).name.empty();
  }
  return false;
}

}  // namespace ptxbench
