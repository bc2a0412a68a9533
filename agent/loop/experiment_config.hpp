#pragma once
// An experiment's configuration: which tasks, how many samples and rounds,
// feedback detail, stop and history policies, the LLM endpoint. Read from a
// JSON file in configs/ with command-line overrides, and stored whole (minus
// secrets) with the experiment so a run can be resumed and reproduced.
// Relative paths are relative to the working directory (the repository root).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/llm/provider.hpp"
#include "agent/prompt/prompt.hpp"

namespace ptxbench {

enum class stop_policy { first_pass, all_rounds };
enum class history_policy { all, last_k };

struct experiment_config {
  std::string name = "demo";
  std::string db = "runs/ptxbench.db";
  std::string tasks_dir = "tasks";
  std::vector<std::string> tasks;  // task ids; empty = every task in tasks_dir
  std::string prompts_dir = "prompts";
  int samples = 1;
  int rounds = 3;
  int concurrency = 8;  // trajectories in flight
  feedback_detail feedback = feedback_detail::full;
  stop_policy stop = stop_policy::first_pass;
  history_policy history = history_policy::all;
  int history_k = 2;  // last_k: assistant/feedback pairs kept
  provider_config llm;
  // kind == embedded: the script of replies and an optional latency override (ms, < 0 = the script's).
  std::string endpoint_script;
  double endpoint_latency_ms = -1;
  std::string gpu = "auto";  // auto | off
  std::vector<uint64_t> seeds{1, 2};
  double time_limit_ms = 10000;
  double timing_budget_ms = 1500;
  // Sharding of the task x sample grid across hosts (a Slurm array job): this
  // process runs the trajectories whose index % shard_count == shard_index.
  int shard_index = 0;
  int shard_count = 1;
};

const char* to_string(stop_policy p);
const char* to_string(history_policy p);

// Parses a config document. Throws input_error naming the file and JSON path.
experiment_config parse_experiment_config(const nlohmann::json& j, const std::string& source = "");
experiment_config load_experiment_config(const std::string& path);
nlohmann::json experiment_config_to_json(const experiment_config& c);
// Upper bounds of the counts (the lower bound is 1): far above any real
// experiment, low enough that the task x sample grid fits in memory.
inline constexpr int k_max_samples = 100000;
inline constexpr int k_max_rounds = 1000;
inline constexpr int k_max_concurrency = 1024;
inline constexpr int k_max_shards = 100000;

// Checks cross-field rules (samples >= 1, rounds >= 1, script for embedded...). Throws input_error.
void validate_experiment_config(const experiment_config& c);

}  // namespace ptxbench
