// The loop and replay give the same verdicts for the same evaluations: one
// policy (evaluator/api/verdict.hpp) names a result and ranks a trajectory's
// candidates, wherever they are read.
#include <doctest/doctest.h>

#include <filesystem>

#include "agent/data/replay.hpp"
#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/orchestrator.hpp"
#include "fake_evaluator.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

std::string with_ptx(const std::string& verdict) {
  return "```ptx\n// verdict: " + verdict + "\n.version 8.7\n.target sm_90a\n.entry k() { ret; }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], \"params\": []}]}\n```\n";
}

// The experiment "agree" of `rounds` replies, run through the loop with `eval`;
// returns the trajectory's final verdict.
std::string run_loop(const fs::path& db, const std::vector<std::string>& replies, evaluator& eval,
                     const std::vector<task>& tasks) {
  experiment_config config;
  config.name = "agree";
  config.samples = 1;
  config.rounds = static_cast<int>(replies.size());
  config.concurrency = 1;
  config.gpu = "off";
  config.stop = stop_policy::all_rounds;
  config.llm.kind = provider_kind::openai;
  config.llm.model = "scripted";
  config.llm.max_retries = 0;
  endpoint_script script;
  for (const auto& r : replies) script.tasks["*"].push_back({{r}});
  embedded_endpoint ep(script);
  provider_config pc = config.llm;
  pc.base_url = ep.base_url();
  auto llm = make_http_provider(pc);
  auto store = run_store::open(db);
  prompt_library prompts(fs::path(PTXBENCH_SOURCE_DIR) / "prompts");
  terminal_progress progress(stderr, false, true);
  orchestrator(config, tasks, *llm, eval, *store, prompts, progress).run(false);
  return store->trajectories(store->find_experiment("agree")->id).front().final_verdict;
}

}  // namespace

TEST_CASE("the loop and replay give a trajectory of a format failure then an evaluator error the same final verdict") {
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_agree_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<task> tasks;
  for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
    if (t.id == "gemm_bf16_mma_sync") tasks.push_back(t);
  REQUIRE(tasks.size() == 1);
  // Round 0 holds no PTX (format), round 1's judging throws (an evaluator error).
  test::throwing_evaluator eval;
  const std::string loop_verdict =
      run_loop(dir / "run.db", {"I would rather not write PTX today.", with_ptx("throw")}, eval, tasks);

  auto source = run_store::open(dir / "run.db", true);
  auto target = run_store::open(dir / "replayed.db");
  data::replay_options options;
  options.experiment = "agree";
  options.run_gpu = false;
  auto summary = data::replay_experiment(*source, *target, eval, [&](const std::string&) {
    return std::optional<task>(tasks.front());
  }, options);
  CHECK(summary.changes.empty());  // the same evaluations: no verdict changed
  const auto replay_verdict =
      target->trajectories(target->find_experiment("agree-replay")->id).front().final_verdict;

  // An evaluator error never beats a verdict: the format failure is the trajectory's verdict.
  CHECK(loop_verdict == "format");
  CHECK(replay_verdict == loop_verdict);
  auto turns = source->turns(source->trajectories(source->find_experiment("agree")->id).front().id);
  REQUIRE(turns.size() == 2);
  CHECK(turns[0].evaluation->verdict == "format");
  CHECK(turns[1].evaluation->verdict == "error");
  fs::remove_all(dir);
}
