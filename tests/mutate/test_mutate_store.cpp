// ptxbench mutate end to end without a GPU: kept mutants become two-round
// trajectories with source "mutation", and `export --kind correction` turns
// them into records that say so.
#include <doctest/doctest.h>
#include <unistd.h>

#include <set>

#include "agent/data/export.hpp"
#include "evaluator/common/json_path.hpp"
#include "mutate_test_util.hpp"

namespace ptxbench {
namespace {

std::filesystem::path fresh_db(const std::string& label) {
  auto dir = std::filesystem::temp_directory_path() / ("ptxbench-mutate-" + label + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir / "runs.db";
}

TEST_CASE("kept mutants are stored as repair trajectories and exported as corrections") {
  auto ts = testing::solution_of("gemm_bf16_wgmma_tma");
  auto eval = testing::static_evaluator();
  auto store = run_store::open(fresh_db("roundtrip"));
  prompt_library prompts(testing::source_root() / "prompts");
  mutate::mutate_options o;
  o.per_solution = 3;
  o.seed = 5;
  o.operators = {"manifest_missing", "misspelled_modifier", "tile_bound_off_by_one"};
  o.experiment_name = "mut";
  o.judging.run_gpu = false;
  auto summary = mutate::run_mutation({ts}, *eval, *store, prompts, o);
  REQUIRE(summary.mutants.size() == 3);
  CHECK(summary.kept() == 2);  // the correctness mutant cannot be verified here
  const std::string table = mutate::format_mutation_table(summary);
  CHECK(table.find("not_run") != std::string::npos);
  CHECK(table.find("mutants judged per minute") != std::string::npos);

  auto exp = store->find_experiment("mut");
  REQUIRE(exp);
  auto trajectories = store->trajectories(exp->id);
  REQUIRE(trajectories.size() == 2);
  std::set<std::string> operators;
  for (const auto& tr : trajectories) {
    CHECK(tr.source == "mutation");
    operators.insert(tr.mutation_operator);
    auto turns = store->turns(tr.id);
    REQUIRE(turns.size() == 2);
    REQUIRE(turns[0].evaluation);
    CHECK(turns[0].evaluation->verdict == (tr.mutation_operator == "manifest_missing" ? "format" : "compile"));
    CHECK(turns[0].turn.feedback.empty());
    CHECK_FALSE(turns[1].turn.feedback.empty());
    // The feedback the mutant really got is the user message of the repair round.
    CHECK(turns[1].turn.messages.back()["content"] == turns[1].turn.feedback);
    REQUIRE(turns[1].candidate);
    CHECK(turns[1].candidate->ptx == ts.s.ptx);
    CHECK(turns[1].candidate->format_problem.empty());
  }
  CHECK(operators == std::set<std::string>{"manifest_missing", "misspelled_modifier"});

  data::export_options eo;
  eo.kind = data::export_kind::correction;
  eo.format = data::export_format::messages;
  auto exported = data::build_export(*store, eo);
  REQUIRE(exported.records.size() == 2);
  for (const auto& r : exported.records) {
    CHECK(r.body["provenance"]["source"] == "mutation");
    CHECK(operators.count(r.body["provenance"]["operator"].get<std::string>()) == 1);
    CHECK(r.body["messages"].size() == 5);
  }
  CHECK_THROWS_AS(mutate::run_mutation({ts}, *eval, *store, prompts, o), input_error);
}

// Records every request; throws for every candidate but the reference
// solution (an evaluator that fails on the mutants).
class recording_evaluator : public evaluator {
 public:
  recording_evaluator(evaluator& inner, std::string reference_ptx) : m_inner(inner), m_reference(std::move(reference_ptx)) {}
  evaluation_result evaluate(const evaluation_request& r) override {
    requests.push_back(r);
    if (r.ptx != m_reference) throw std::runtime_error("worker lost");
    return m_inner.evaluate(r);
  }
  std::string version() const override { return m_inner.version(); }
  std::string gpu_description() const override { return m_inner.gpu_description(); }
  std::vector<evaluation_request> requests;

 private:
  evaluator& m_inner;
  std::string m_reference;
};

TEST_CASE("mutants are judged through agent/judge with the run's seeds and limits - an evaluator error is no runtime verdict") {
  auto ts = testing::solution_of("gemm_bf16_wgmma_tma");
  auto inner = testing::static_evaluator();
  recording_evaluator eval(*inner, ts.s.ptx);
  auto store = run_store::open(fresh_db("settings"));
  prompt_library prompts(testing::source_root() / "prompts");
  mutate::mutate_options o;
  o.per_solution = 2;
  o.operators = {"misspelled_modifier", "tile_bound_off_by_one"};
  o.experiment_name = "settings";
  o.judging.seeds = {11, 12};
  o.judging.time_limit_ms = 777;
  o.judging.timing_budget_ms = 66;
  o.judging.run_gpu = false;
  auto summary = mutate::run_mutation({ts}, eval, *store, prompts, o);
  REQUIRE(eval.requests.size() == 3);  // the reference, then two mutants
  for (const auto& r : eval.requests) {
    CHECK(r.seeds == std::vector<uint64_t>{11, 12});
    CHECK(r.time_limit_ms == 777);
    CHECK(r.timing_budget_ms == 66);
    CHECK_FALSE(r.run_gpu);
  }
  REQUIRE(summary.mutants.size() == 2);
  for (const auto& m : summary.mutants) {
    CHECK(m.outcome == mutate::mutant_outcome::error);
    CHECK(m.verdict == "error");  // the evaluator's failure, never "runtime"
  }
  // Stored as a run stores them, so replay judges with the same settings.
  auto exp = store->find_experiment("settings");
  REQUIRE(exp);
  const auto again = judge_settings_from_config(exp->config);
  CHECK(again.seeds == std::vector<uint64_t>{11, 12});
  CHECK(again.time_limit_ms == 777);
  CHECK(again.timing_budget_ms == 66);
  CHECK_FALSE(again.run_gpu);
}

TEST_CASE("an unknown operator or a task without a solution is an input error") {
  auto eval = testing::static_evaluator();
  auto store = run_store::open(fresh_db("errors"));
  prompt_library prompts(testing::source_root() / "prompts");
  mutate::mutate_options o;
  o.operators = {"no_such_operator"};
  o.experiment_name = "x";
  CHECK_THROWS_AS(mutate::run_mutation({}, *eval, *store, prompts, o), input_error);
  auto tasks = load_task_dir(testing::source_root() / "tasks");
  CHECK_THROWS_AS(mutate::load_solutions(tasks, default_solution_roots(testing::source_root() / "tasks"), {"nope"}), input_error);
}

}  // namespace
}  // namespace ptxbench
