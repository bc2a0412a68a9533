// The report's across-task summary (agent/data/summary.hpp): per experiment x
// model over all tasks, per family and per level, each task weighing the same,
// in the text, JSON and HTML reports.
#include <doctest/doctest.h>

#include <cmath>

#include "agent/data/report.hpp"
#include "agent/data/summary.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;

namespace {

// gemm_bf16_wgmma at level 2, attention_fwd_bf16_wgmma at level 3.
task_catalogue levels() {
  task_catalogue c;
  c["gemm_bf16_wgmma"] = {"gemm", 2, {{"dtype", "bf16"}, {"layout", "nt"}}, {"core", "full"}};
  c["attention_fwd_bf16_wgmma"] = {"attention_fwd", 3, {{"causal", "no"}}, {"full"}};
  return c;
}

std::vector<group_metrics> fixture_groups(run_store& store, bool with_levels) {
  auto groups = compute_metrics(load_experiments(store, {}));
  if (with_levels) annotate_tasks(groups, levels());
  return groups;
}

const summary_row* row(const std::vector<summary_row>& rows, const std::string& label) {
  for (const auto& r : rows)
    if (scope_label(r) == label) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("summary across tasks: every task weighs the same over all tasks and per family and per level") {
  auto f = testing::make_fixture_db("summary");
  auto rows = compute_summaries(fixture_groups(*f.store, true));
  REQUIRE(rows.size() == 5);  // all, 2 families, 2 levels
  const auto* all = row(rows, "all tasks");
  REQUIRE(all != nullptr);
  CHECK(all->experiment == "exp1");
  CHECK(all->tasks == 2);
  CHECK(all->trajectories == 4);
  CHECK(*all->passed == doctest::Approx(0.5));    // gemm 1 of 2, attention 1 of 2
  CHECK(*all->correct == doctest::Approx(0.75));  // gemm 1 of 2, attention 2 of 2
  CHECK(*all->fast_p[fast_1_index] == doctest::Approx(0.25));  // gemm 0.5, attention 0
  CHECK(*all->pass_at_k.at(1) == doctest::Approx(0.5));
  CHECK(all->pass_at_k_tasks.at(1) == 2);
  CHECK_FALSE(all->pass_at_k.at(5).has_value());  // no task has 5 samples
  // geomean over tasks of each task's geomean of best speedups: gemm 1.2, attention sqrt(0.7 x 0.5).
  CHECK(*all->geomean_speedup == doctest::Approx(std::sqrt(1.2 * std::sqrt(0.7 * 0.5))));
  CHECK(all->tasks_with_speedup == 2);
  CHECK(rows[1].scope == summary_scope::family);
  CHECK(rows[1].family == "attention_fwd");
  CHECK(rows[2].family == "gemm");
  CHECK(*rows[2].passed == doctest::Approx(0.5));
  CHECK(*rows[2].geomean_speedup == doctest::Approx(1.2));
  const auto* level3 = row(rows, "level 3");
  REQUIRE(level3 != nullptr);
  CHECK(level3->tasks == 1);
  CHECK(*level3->correct == doctest::Approx(1.0));
  CHECK(row(rows, "level 2") != nullptr);
  // Without levels (no catalogue, or tasks that give none) there are no level rows.
  CHECK(compute_summaries(fixture_groups(*f.store, false)).size() == 3);
}

TEST_CASE("summary across tasks: a stage that ran in no task reads not run and never 0") {
  auto f = testing::make_fixture_db("summary-not-run");
  experiment_row e;
  e.name = "cpu";
  e.model = "m2";
  const auto id = f.store->create_experiment(e);
  // Compile failures only: runtime and later stages never ran.
  testing::add_trajectory(*f.store, id, "gemm_bf16_wgmma", "gemm", 0, "X", {{"compile"}}, "m2");
  testing::add_trajectory(*f.store, id, "gemm_bf16_wgmma", "gemm", 1, "Y", {{"compile"}}, "m2");
  auto rows = compute_summaries(fixture_groups(*f.store, true));
  const summary_row* cpu = nullptr;
  for (const auto& r : rows)
    if (r.experiment == "cpu" && r.scope == summary_scope::all) cpu = &r;
  REQUIRE(cpu != nullptr);
  CHECK(*cpu->compiled == 0.0);
  CHECK_FALSE(cpu->passed.has_value());
  CHECK_FALSE(cpu->correct.has_value());
  CHECK_FALSE(cpu->pass_at_k.at(1).has_value());
  CHECK_FALSE(cpu->geomean_speedup.has_value());
  auto text = format_report_text(fixture_groups(*f.store, true));
  CHECK(text.find("summary per experiment x model") != std::string::npos);
  CHECK(text.find("not run") != std::string::npos);
}

TEST_CASE("the text and JSON and HTML reports open with the across-task summary") {
  auto f = testing::make_fixture_db("summary-outputs");
  auto groups = fixture_groups(*f.store, true);
  auto text = format_report_text(groups);
  CHECK(text.find("summary per experiment x model") < text.find("per task:"));
  CHECK(text.find("family gemm") != std::string::npos);
  CHECK(text.find("level 3") != std::string::npos);
  CHECK(text.find("0.84 (2 of 2 tasks)") != std::string::npos);
  auto json = render_report_json(groups, {}, "runs.db");
  REQUIRE(json["summaries"].size() == 5);
  CHECK(json["summaries"][0]["scope"] == "all");
  CHECK(json["summaries"][0]["rates"]["passed"] == doctest::Approx(0.5));
  CHECK(json["summaries"][0]["pass_at_k"]["1"] == doctest::Approx(0.5));
  CHECK(json["summaries"][0]["pass_at_k"]["5"].is_null());
  CHECK(json["summaries"][3]["scope"] == "level");
  CHECK(json["summaries"][3]["level"] == 2);
  CHECK(json["groups"][1]["level"] == 2);
  CHECK(json["groups"][1]["variant"]["layout"] == "nt");
  auto html = render_report_html(groups, {}, "runs.db");
  CHECK(html.find("Summary across tasks") < html.find("Per task"));
  CHECK(html.find("<td class=\"l\">family attention_fwd</td>") != std::string::npos);
}
