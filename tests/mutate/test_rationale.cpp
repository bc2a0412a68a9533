// Rationale mode: a teacher (here the embedded endpoint) is shown each kept
// mutant, its feedback and the fix; its answer is stored and exported as the
// fix's reasoning.
#include <doctest/doctest.h>
#include <unistd.h>

#include "agent/data/export.hpp"
#include "agent/endpoint/embedded_endpoint.hpp"
#include "evaluator/common/json_path.hpp"
#include "mutate_test_util.hpp"

namespace ptxbench {
namespace {

TEST_CASE("rationale mode stores the teacher's reasoning with the fix") {
  auto ts = testing::solution_of("gemm_bf16_wgmma_tma");
  auto eval = testing::static_evaluator();
  auto dir = std::filesystem::temp_directory_path() / ("ptxbench-rationale-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto store = run_store::open(dir / "runs.db");
  prompt_library prompts(testing::source_root() / "prompts");
  endpoint_script script;
  script.tasks["*"] = {{{"The feedback names a misspelled modifier; the fix spells it as ptxas expects.", ""}}};
  embedded_endpoint ep(script);
  provider_config pc;
  pc.kind = provider_kind::openai;
  pc.base_url = ep.base_url();
  pc.model = "teacher";
  pc.max_retries = 0;
  auto teacher = make_http_provider(pc);
  mutate::mutate_options o;
  o.per_solution = 1;
  o.operators = {"misspelled_modifier"};
  o.experiment_name = "rat";
  o.judging.run_gpu = false;
  o.rationale_teacher = teacher.get();
  o.rationale_model = "teacher";
  auto summary = mutate::run_mutation({ts}, *eval, *store, prompts, o);
  REQUIRE(summary.kept() == 1);
  CHECK(summary.rationales == 1);
  CHECK(ep.requests_served() == 1);
  auto exp = store->find_experiment("rat");
  auto turns = store->turns(store->trajectories(exp->id).at(0).id);
  REQUIRE(turns.size() == 2);
  CHECK(turns[0].turn.author == "mutation");
  CHECK(turns[1].turn.author == "reference");
  CHECK(turns[1].turn.reasoning.find("misspelled modifier") != std::string::npos);
  data::export_options eo;
  eo.format = data::export_format::messages;
  eo.reasoning = data::reasoning_mode::field;
  auto exported = data::build_export(*store, eo);
  REQUIRE(exported.records.size() == 1);
  const auto& fix = exported.records[0].body["messages"].back();
  CHECK(fix["reasoning_content"] == turns[1].turn.reasoning);
  CHECK(exported.records[0].body["provenance"]["author"] == "reference");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a failed rationale call leaves the fix without reasoning") {
  auto ts = testing::solution_of("gemm_bf16_wgmma_tma");
  auto eval = testing::static_evaluator();
  auto dir = std::filesystem::temp_directory_path() / ("ptxbench-rationale-fail-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto store = run_store::open(dir / "runs.db");
  prompt_library prompts(testing::source_root() / "prompts");
  provider_config pc;
  pc.kind = provider_kind::openai;
  pc.base_url = "http://127.0.0.1:9/v1";  // nothing listens on the discard port
  pc.model = "teacher";
  pc.max_retries = 0;
  pc.timeout_s = 5;
  auto teacher = make_http_provider(pc);
  mutate::mutate_options o;
  o.per_solution = 1;
  o.operators = {"manifest_missing"};
  o.experiment_name = "rat";
  o.judging.run_gpu = false;
  o.rationale_teacher = teacher.get();
  auto summary = mutate::run_mutation({ts}, *eval, *store, prompts, o);
  REQUIRE(summary.kept() == 1);
  CHECK(summary.rationale_failures == 1);
  auto exp = store->find_experiment("rat");
  auto traj = store->trajectories(exp->id).at(0);
  CHECK(store->turns(traj.id).at(1).turn.reasoning.empty());
  CHECK(store->llm_failures(exp->id).size() == 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench
