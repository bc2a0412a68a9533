// run --coverage-target: extra samples of the tasks whose task x failing-stage
// cells hold fewer than N verified repairs, until filled or the LLM-call
// budget is spent.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/coverage.hpp"
#include "agent/loop/orchestrator.hpp"
#include "evaluator/common/json_path.hpp"
#include "fake_evaluator.hpp"

using namespace ptxbench;

namespace {

std::string reply(const std::string& verdict) {
  return "```ptx\n// verdict: " + verdict + "\n.version 8.7\n.target sm_90a\n.entry k() { ret; }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], \"params\": []}]}\n```\n";
}

struct coverage_run {
  std::filesystem::path dir;
  std::unique_ptr<run_store> store;
  std::vector<task> tasks;
  prompt_library prompts{std::string(PTXBENCH_SOURCE_DIR) + "/prompts"};
  terminal_progress progress{stderr, false, true};
  experiment_config config;
  test::fake_evaluator eval;

  explicit coverage_run(const std::string& label) {
    dir = std::filesystem::temp_directory_path() / ("ptxbench_coverage_" + std::to_string(::getpid()) + label);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    store = run_store::open(dir / "run.db");
    for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
      if (t.id == "gemm_bf16_mma_sync") tasks.push_back(t);
    config.name = "cov";
    config.samples = 1;
    config.rounds = 2;
    config.concurrency = 2;
    config.llm.kind = provider_kind::openai;
    config.llm.model = "scripted";
    config.llm.max_retries = 0;
  }
  ~coverage_run() { std::filesystem::remove_all(dir); }

  run_summary run(const std::vector<std::string>& first_round_verdicts) {
    endpoint_script script;
    std::vector<scripted_reply> first;
    for (const auto& v : first_round_verdicts) first.push_back({reply(v), ""});
    script.tasks["*"] = {first, {{reply("passed"), ""}}};
    embedded_endpoint ep(script);
    provider_config pc = config.llm;
    pc.base_url = ep.base_url();
    auto llm = make_http_provider(pc);
    orchestrator o(config, tasks, *llm, eval, *store, prompts, progress);
    return o.run(false);
  }
};

}  // namespace

TEST_CASE("coverage sampling stops once every cell holds the target") {
  coverage_run f("filled");
  f.config.coverage_target = 1;
  f.config.max_llm_calls = 100;
  // Sample n fails round 0 at stage n mod 6, round 1 passes: six samples fill every cell.
  auto summary = f.run({"format", "compile", "runtime", "correctness", "instructions", "performance"});
  CHECK(summary.trajectories == 6);
  CHECK(summary.turns_requested == 12);
  CHECK(summary.budget_stopped == 0);
  auto cov = count_repairs(*f.store, summary.experiment_id, f.tasks);
  for (const auto& [stage_name, n] : cov.at("gemm_bf16_mma_sync")) CHECK_MESSAGE(n == 1, stage_name);
  CHECK(format_repair_coverage(cov, 1).find("every cell filled") != std::string::npos);
}

TEST_CASE("coverage sampling stops at the LLM-call budget and names the unfilled cells") {
  coverage_run f("budget");
  f.config.coverage_target = 2;
  f.config.max_llm_calls = 9;
  auto summary = f.run({"compile", "correctness"});  // four stages can never fill
  CHECK(summary.turns_requested == 9);
  CHECK(summary.budget_stopped >= 1);
  auto cov = count_repairs(*f.store, summary.experiment_id, f.tasks);
  CHECK(cov.at("gemm_bf16_mma_sync").at("compile") >= 2);
  CHECK(cov.at("gemm_bf16_mma_sync").at("correctness") >= 2);
  CHECK(cov.at("gemm_bf16_mma_sync").at("runtime") == 0);
  const std::string table = format_repair_coverage(cov, 2);
  CHECK(table.find("gemm_bf16_mma_sync x runtime") != std::string::npos);
  CHECK(table.find("gemm_bf16_mma_sync x compile") == std::string::npos);
}

TEST_CASE("coverage_target without a budget is refused") {
  experiment_config c;
  c.llm.base_url = "http://127.0.0.1:1/v1";
  CHECK_NOTHROW(validate_experiment_config(c));
  c.coverage_target = 3;
  CHECK_THROWS_WITH_AS(validate_experiment_config(c), doctest::Contains("max_llm_calls"), input_error);
  c.max_llm_calls = 10;
  CHECK_NOTHROW(validate_experiment_config(c));
}
