// run's options. Most are backed by a key of the experiment config: a value
// given here replaces the config file's, and all three sources are checked by
// the same rule (option_reader.hpp). Bounds come from experiment_config.hpp,
// which checks the stored configs with the same ones.
#include "agent/cli/option_rows.hpp"
#include "agent/loop/experiment_config.hpp"

namespace ptxbench::cli {

std::vector<option> experiment_option_rows() {
  const value_type text = value_type::text;
  return {
      make_option("config", "FILE",
                  "experiment config (JSON; paths in it are relative to its folder). run: default "
                  "configs/demo.json; mutate: the config whose teacher writes --rationale"),
      make_option("name", "NAME",
                  "name of the experiment written. run: default the config's (a taken name becomes NAME-2, ...), "
                  "unique in the database when given; replay: default <experiment>-replay; mutate: default "
                  "mutate-seed<S>")
          .config("name")
          .changeable_on_resume(),
      make_option("db", "FILE", "run database (run: default the config's)").config("db").changeable_on_resume(),
      make_option("tasks", "ID,...", "task ids to run (default: the config's, else every task of the suite)")
          .list_of(text)
          .config("tasks"),
      make_option("samples", "N", "trajectories per task").integer(1, k_max_samples).config("samples"),
      make_option("rounds", "N", "rounds per trajectory (1 = no repair)").integer(1, k_max_rounds).config("rounds"),
      make_option("concurrency", "N", "trajectories in flight")
          .integer(1, k_max_concurrency)
          .config("concurrency")
          .changeable_on_resume(),
      make_option("feedback", "DETAIL",
                  "feedback detail given to the model; profile: full, plus a profile of a candidate that reached "
                  "the performance stage, its hot PTX lines beside the library (mutate: stored with the mutant)")
          .one_of({"none", "stage", "full", "profile"})
          .config("feedback"),
      make_option("stop", "POLICY", "stop a trajectory at its first full pass, or run all its rounds")
          .one_of({"first_pass", "all_rounds"})
          .config("stop"),
      make_option("history", "POLICY", "the earlier turns a prompt keeps: all, or the last --history-k")
          .one_of({"all", "last_k"})
          .config("history"),
      make_option("history-k", "N", "turns kept with --history last_k").integer(0, k_max_rounds).config("history_k"),
      make_option("max-context-tokens", "N",
                  "the model's context: older PTX elided and older attempts dropped to fit it; a context-length "
                  "error is retried once with half the history (0: no limit)")
          .integer(0, 100000000)
          .config("max_context_tokens"),
      make_option("gpu", "MODE", "GPU stages: auto (run them when a GPU is here) or off")
          .one_of({"auto", "off"})
          .by_default("auto")
          .config("gpu"),
      make_option("model", "NAME", "the model asked (llm.model)").config("llm.model"),
      make_option("base-url", "URL", "the LLM endpoint (llm.base_url)")
          .check(http_address_rule)
          .config("llm.base_url")
          .changeable_on_resume(),
      make_option("latency-ms", "MS", "embedded endpoint: delay each reply by this many ms (default: the script's)")
          .number(0, k_max_endpoint_latency_ms)
          .config("endpoint_latency_ms"),
      make_option("evaluator-url", "URL,...", "judge on these evald services instead of in-process")
          .list_of(text)
          .check(http_address_rule)
          .config("evaluator.url")
          .changeable_on_resume(),
      make_option("shard", "I/N", "run shard I of N of the task x sample grid (one database per shard)")
          .shard_of(k_max_shards)
          .config("shard_index")
          .config("shard_count"),
      make_option("coverage-target", "N",
                  "keep sampling tasks until each task x failing-stage cell has N verified repairs (0: off)")
          .integer(0, 1000000)
          .config("coverage_target"),
      make_option("max-llm-calls", "N", "LLM-call budget (0: none; required with --coverage-target)")
          .integer(0, 1000000000)
          .config("max_llm_calls"),
      make_option("branch", "N",
                  "replies sampled at each repair round; the best continues, the others are kept as siblings "
                  "(preference pairs). Each is an LLM call (1: no branching)")
          .integer(1, k_max_branch)
          .config("branch"),
      make_option("resume", "", "continue the named experiment from its database (its stored config wins)").boolean(),
      make_option("quiet", "", "no progress output (errors are still printed)").boolean(),
  };
}

}  // namespace ptxbench::cli
