#pragma once
// An experiment's configuration: which tasks, how many samples and rounds,
// feedback detail, stop and history policies, the LLM endpoint. Read from a
// JSON file in configs/ with command-line overrides, and stored whole (minus
// secrets) with the experiment so a run can be resumed and reproduced.
// Relative paths written in a config file are relative to that file's folder;
// defaults and command-line values are relative to the working directory.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/llm/provider.hpp"
#include "agent/prompt/prompt.hpp"

namespace ptxbench {

enum class stop_policy { first_pass, all_rounds };
enum class history_policy { all, last_k };

// A second endpoint that writes repair rounds (round >= 1) once the student
// has failed `after_failures` times (0: every repair round). Its replies are
// judged like the student's, its reasoning stored; its turns have author
// "teacher". Config: "teacher": {<the keys of "llm">, "after_failures": k,
// "endpoint_script": file (kind embedded)}.
struct teacher_config {
  provider_config llm;
  int after_failures = 0;
  std::string endpoint_script;
};

struct experiment_config {
  std::string name = "demo";
  std::string db = "runs/ptxbench.db";
  std::string tasks_dir = "tasks";
  std::vector<std::string> tasks;  // task ids; empty = every task of the suite
  std::string suite;               // a named suite of tasks_dir (core, full); empty = every task
  std::string prompts_dir = "prompts";
  int samples = 1;
  int rounds = 3;
  int concurrency = 8;  // trajectories in flight
  feedback_detail feedback = feedback_detail::full;
  stop_policy stop = stop_policy::first_pass;
  history_policy history = history_policy::all;
  int history_k = 2;  // last_k: assistant/feedback pairs kept
  // > 0: the model's context in tokens; prompts are fitted into it minus
  // llm.max_tokens (context_budget.hpp), and a context-length error from the
  // server is retried once with half the history.
  int max_context_tokens = 0;
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
  // Remote evaluation ("evaluator": {"url": "http://..." | [...], "token_env": "VAR"}):
  // candidates are judged by these `ptxbench evald` services instead of in-process.
  std::vector<std::string> evaluator_urls;
  std::string evaluator_token_env;  // the variable holding their bearer token (the token is never stored)
  // "timeout_s": one request; "max_wait_s": how long one evaluation waits for
  // a service that can take it before the run stops as unavailable (resumable);
  // "max_attempts": error answers before the candidate's evaluation is an error.
  double evaluator_timeout_s = 300;
  double evaluator_max_wait_s = 300;
  int evaluator_max_attempts = 6;
  std::optional<teacher_config> teacher;
  // Coverage-driven collection: after the tasks x samples grid, keep adding
  // samples of the tasks that have a task x failing-stage cell with fewer
  // than coverage_target verified repairs (agent/loop/coverage.hpp), until
  // every cell is filled or max_llm_calls LLM calls were made. 0: off.
  int coverage_target = 0;
  int max_llm_calls = 0;  // 0: no limit (required with coverage_target)
  // Branching repair: at each repair round (round >= 1) `branch` replies are
  // sampled from the same conversation state, all are judged and the best
  // continues the trajectory (the others are kept as its siblings, for
  // preference pairs). Each reply is one LLM call. Round 0 is sampled once,
  // as without branching (samples already give round 0 its variety). 1: off.
  int branch = 1;
};

const char* to_string(stop_policy p);
const char* to_string(history_policy p);

// Parses a config document. Throws input_error naming the file and JSON path.
experiment_config parse_experiment_config(const nlohmann::json& j, const std::string& source = "");
// Reads and parses a config file and resolves the paths it gives against its folder.
experiment_config load_experiment_config(const std::string& path);
// The config file as JSON, its relative paths (db, tasks_dir, prompts_dir,
// endpoint_script, llm.replay_db) resolved against its folder, not parsed: for
// a caller that lays values of its own over it before parse_experiment_config.
nlohmann::json read_experiment_config_document(const std::string& path);
// Checks that the folders and files the config names exist (tasks_dir,
// prompts_dir, endpoint_script or replay_db as the provider needs), so a bad
// path fails before the run database is created. Throws input_error.
void check_config_paths(const experiment_config& c);
nlohmann::json experiment_config_to_json(const experiment_config& c);
// Upper bounds of the counts (the lower bound is 1): far above any real
// experiment, low enough that the task x sample grid fits in memory.
inline constexpr int k_max_samples = 100000;
inline constexpr int k_max_rounds = 1000;
inline constexpr int k_max_concurrency = 1024;
inline constexpr int k_max_shards = 100000;
inline constexpr int k_max_branch = 16;
// The embedded endpoint's reply delay: an hour (a stored config may hold -1: the script's own).
inline constexpr double k_max_endpoint_latency_ms = 3600000;

// Checks cross-field rules (samples >= 1, rounds >= 1, script for embedded...). Throws input_error.
void validate_experiment_config(const experiment_config& c);

}  // namespace ptxbench
