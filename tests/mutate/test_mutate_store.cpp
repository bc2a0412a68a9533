// ptxbench mutate end to end without a GPU: kept mutants become two-round
// trajectories with source "mutation", and `export --kind correction` turns
// them into records that say so.
#include <doctest/doctest.h>
#include <unistd.h>

#include <set>

#include "agent/data/export.hpp"
#include "evaluator/api/json_path.hpp"
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
  o.run_gpu = false;
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
