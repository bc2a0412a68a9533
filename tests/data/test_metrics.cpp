#include <doctest/doctest.h>

#include <cmath>

#include "agent/data/metrics.hpp"

#include "agent/data/report.hpp"
#include "agent/data/svg.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;

TEST_CASE("pass@k matches hand-computed values of the unbiased estimator") {
  CHECK(pass_at_k(10, 3, 1) == doctest::Approx(0.3));
  CHECK(pass_at_k(10, 3, 5) == doctest::Approx(1.0 - 21.0 / 252.0));  // C(7,5)=21, C(10,5)=252
  CHECK(pass_at_k(4, 1, 2) == doctest::Approx(0.5));                  // 1 - 3/6
  CHECK(pass_at_k(5, 0, 1) == 0.0);
  CHECK(pass_at_k(5, 5, 3) == 1.0);
  CHECK(pass_at_k(5, 3, 3) == 1.0);  // fewer failures than k: every draw holds a pass
  CHECK(pass_at_k(200, 1, 10) == doctest::Approx(0.05));
}

TEST_CASE("metrics per model x task: best so far per round and fast_p and speedups") {
  auto f = testing::make_fixture_db("metrics");
  auto groups = compute_metrics(load_experiments(*f.store, {}));
  REQUIRE(groups.size() == 2);
  const auto& attn = groups[0];
  const auto& gemm = groups[1];
  CHECK(attn.task == "attention_fwd_bf16_wgmma");
  CHECK(gemm.task == "gemm_bf16_wgmma");
  CHECK(gemm.model == "m1");

  CHECK(gemm.trajectories == 2);
  CHECK(gemm.candidates == 6);
  REQUIRE(gemm.per_round.size() == 3);
  CHECK(gemm.per_round[0].compiled == 0.0);
  CHECK(gemm.per_round[1].compiled == 0.5);
  CHECK(gemm.per_round[1].correct == 0.0);
  CHECK(gemm.per_round[2].correct == 0.5);
  CHECK(gemm.final.compiled == 1.0);
  CHECK(gemm.final.passed == 0.5);
  CHECK(gemm.final.fast_p[3] == 0.5);  // A: 1.2 > 1.0
  CHECK(gemm.pass_at_k.at(1) == doctest::Approx(0.5));
  CHECK(gemm.pass_at_k.count(5) == 0);  // k > n
  CHECK(gemm.verdicts[1] == 3);         // three candidates failed compile

  // C passed at 0.7, D correct but slow at 0.5.
  CHECK(attn.final.correct == 1.0);
  CHECK(attn.final.passed == 0.5);
  CHECK(attn.final.fast_p[0] == 1.0);
  CHECK(attn.final.fast_p[1] == 0.5);  // 0.5 is not > 0.5
  CHECK(attn.final.fast_p[2] == 0.0);
  REQUIRE(attn.speedups.size() == 2);
  CHECK(attn.speedups.front() == doctest::Approx(0.5));
  CHECK(median_sorted(attn.speedups) == doctest::Approx(0.6));
}

TEST_CASE("the report is a terminal table and a self-contained escaped HTML page with SVG plots") {
  auto f = testing::make_fixture_db("report", "m<1>");
  auto experiments = load_experiments(*f.store, {});
  auto groups = compute_metrics(experiments);
  auto text = format_report_text(groups);
  CHECK(text.find("gemm_bf16_wgmma") != std::string::npos);
  CHECK(text.find("pass@1") != std::string::npos);
  CHECK(text.find("fast_p") != std::string::npos);  // definitions printed

  auto html = render_report_html(groups, {experiments[0].experiment}, "runs/x.db");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<polyline") != std::string::npos);  // per-round curves
  CHECK(html.find("<rect") != std::string::npos);      // funnel and histogram bars
  CHECK(html.find("m&lt;1&gt;") != std::string::npos);
  CHECK(html.find("m<1>") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);  // nothing loaded from elsewhere
  CHECK(html.find("src=") == std::string::npos);
}

TEST_CASE("fast_p at 1.5 and 2.0 and geometric-mean speedups and stage counts") {
  auto f = testing::make_fixture_db("metrics-geomean");
  auto groups = compute_metrics(load_experiments(*f.store, {}));
  REQUIRE(groups.size() == 2);
  const auto& attn = groups[0];
  const auto& gemm = groups[1];
  CHECK(gemm.experiment == "exp1");
  REQUIRE(gemm.final.fast_p.size() == 6);
  CHECK(fast_p_thresholds[fast_1_index] == 1.0);
  CHECK(gemm.final.fast_p[4] == 0.0);  // 1.2 is not > 1.5
  REQUIRE(attn.geomean_correct);
  CHECK(*attn.geomean_correct == doctest::Approx(std::sqrt(0.7 * 0.5)));
  CHECK(*gemm.geomean_correct == doctest::Approx(1.2));
  // compile: A failed, passed, passed; B failed, failed, passed.
  const auto& compile = gemm.stages[static_cast<int>(stage::compile)];
  CHECK(compile.passed == 3);
  CHECK(compile.failed == 3);
  CHECK(compile.trajectories_passed == 2);
  // runtime: A r1 r2 passed, B r2 failed, the rest not run.
  const auto& runtime = gemm.stages[static_cast<int>(stage::runtime)];
  CHECK(runtime.passed == 2);
  CHECK(runtime.failed == 1);
  CHECK(runtime.not_run == 3);
}

TEST_CASE("stages that never ran read not run and are never counted as failed") {
  auto dir = testing::fresh_dir("metrics-not-run");
  auto store = run_store::open(dir / "runs.db");
  experiment_row e;
  e.name = "nogpu";
  e.model = "m1";
  int64_t eid = store->create_experiment(e);
  // Compiled, static check passed, every GPU stage not run: the demo without a GPU.
  auto r = testing::make_result("format");
  r.verdict = stage::runtime;
  for (int s = 0; s < stage_count; ++s) r.stages[static_cast<stage>(s)].status = s < 2 ? stage_status::passed : stage_status::not_run;
  int64_t tid = store->ensure_trajectory(eid, "gemm_bf16_mma_sync", "gemm", 0);
  turn_row t;
  t.trajectory_id = tid;
  t.messages = testing::prompt_for("gemm_bf16_mma_sync", 0, "");
  t.reply = "reply";
  candidate_row c;
  c.ptx = "ptx";
  store->record_turn(t, c);
  auto row_written = evaluation_row_of(r, *store->candidate_id(store->turns(tid).back().turn.id));
  CHECK(row_written.verdict == "partial");
  row_written.verdict = "runtime";  // as a row written before partial verdicts existed names it
  store->record_evaluation(row_written);
  auto groups = compute_metrics(load_experiments(*store, {}));
  REQUIRE(groups.size() == 1);
  const auto& g = groups[0];
  // Its runtime stage did not run: no runtime verdict, a partial one.
  CHECK(g.verdicts[static_cast<int>(stage::runtime)] == 0);
  CHECK(g.partial == 1);
  CHECK(g.unevaluated == 0);
  CHECK(g.stages[static_cast<int>(stage::runtime)].failed == 0);
  CHECK(g.stages[static_cast<int>(stage::runtime)].not_run == 1);
  CHECK_FALSE(stage_ran(g, stage_of(rate_kind::correct)));
  CHECK(stage_ran(g, stage_of(rate_kind::compiled)));

  auto text = format_report_text(groups);
  CHECK(text.find("100%  not run") != std::string::npos);  // compiled 100%, correct not run
  auto json = render_report_json(groups, {e}, "x.db");
  const auto& row = json["groups"][0];
  CHECK(row["rates"]["compiled"] == 1.0);
  CHECK(row["counts"]["verdicts"]["runtime"] == 0);
  CHECK(row["counts"]["verdicts"]["partial"] == 1);
  CHECK(row["rates"]["correct"].is_null());
  CHECK(row["rates"]["fast_p"]["1.5"].is_null());
  CHECK(row["pass_at_k"]["1"].is_null());  // no performance stage ran: nobody could pass
  CHECK(row["stages"]["runtime"]["pass_rate"].is_null());
  CHECK(row["stages"]["compile"]["pass_rate"] == 1.0);
  auto html = render_report_html(groups, {e}, "x.db");
  CHECK(html.find("<td class=\"nr\">not run</td>") != std::string::npos);
  CHECK(html.find("correct (not run)") != std::string::npos);
}

TEST_CASE("report json has per experiment x task x model counts and stage rates and pass@k and fast_p and rounds") {
  auto f = testing::make_fixture_db("metrics-json");
  experiment_row second;
  second.name = "exp2";
  second.model = "m2";
  int64_t eid = f.store->create_experiment(second);
  testing::add_trajectory(*f.store, eid, "gemm_bf16_wgmma", "gemm", 0, "E", {{"passed", 2.5}}, "m2");
  auto experiments = load_experiments(*f.store, {"exp2", "exp1"});
  auto groups = compute_metrics(experiments);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].experiment == "exp2");  // in the order asked for
  std::vector<experiment_row> rows{experiments[0].experiment, experiments[1].experiment};
  auto j = render_report_json(groups, rows, "runs.db");
  CHECK(j["fast_p_thresholds"] == nlohmann::json({0.0, 0.5, 0.8, 1.0, 1.5, 2.0}));
  CHECK(j["experiments"][0]["name"] == "exp2");
  const auto& e2 = j["groups"][0];
  CHECK(e2["model"] == "m2");
  CHECK(e2["rates"]["fast_p"]["2"] == 1.0);
  CHECK(e2["speedup"]["geomean_correct_candidates"] == doctest::Approx(2.5));
  const auto& gemm = j["groups"][2];
  CHECK(gemm["experiment"] == "exp1");
  CHECK(gemm["task"] == "gemm_bf16_wgmma");
  CHECK(gemm["counts"]["trajectories"] == 2);
  CHECK(gemm["counts"]["candidates"] == 6);
  CHECK(gemm["counts"]["verdicts"]["compile"] == 3);
  CHECK(gemm["pass_at_k"]["1"] == doctest::Approx(0.5));
  CHECK(gemm["pass_at_k"]["5"].is_null());
  CHECK(gemm["stages"]["runtime"]["trajectories_ran"] == 2);
  CHECK(gemm["stages"]["runtime"]["pass_rate"] == 0.5);
  REQUIRE(gemm["per_round"].size() == 3);
  CHECK(gemm["per_round"][1]["compiled"] == 0.5);
  CHECK(gemm["per_round"][2]["fast_p"]["1"] == 0.5);
  CHECK(gemm["speedup"]["best_per_trajectory"] == nlohmann::json({1.2}));
}

TEST_CASE("report html draws pass@k and fast_p curves and a speedup histogram with reference lines") {
  auto f = testing::make_fixture_db("metrics-html");
  auto experiments = load_experiments(*f.store, {});
  auto groups = compute_metrics(experiments);
  groups[0].speedup_threshold = 0.9;
  auto html = render_report_html(groups, {experiments[0].experiment}, "runs.db");
  CHECK(html.find("data-chart=\"pass_at_k\"") != std::string::npos);
  CHECK(html.find("data-chart=\"fast_p\"") != std::string::npos);
  CHECK(html.find("class=\"chart histogram\"") != std::string::npos);
  CHECK(html.find("threshold 0.90") != std::string::npos);
  CHECK(html.find("1.0 (as fast)") != std::string::npos);
  size_t refs = 0;
  for (size_t at = html.find("class=\"reference\""); at != std::string::npos; at = html.find("class=\"reference\"", at + 1))
    ++refs;
  CHECK(refs == 3);  // 1.0 in both histograms, the threshold in the first
}

TEST_CASE("identical series get distinct dashes and marker shapes") {
  std::vector<series> lines{{"a", {0.5, 0.5}}, {"b", {0.5, 0.5}}, {"c", {0.5, 0.5}}};
  auto svg = svg_line_chart("t", {"x0", "x1"}, lines, 1.0);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(svg.find("<rect x=") != std::string::npos);
  CHECK(svg.find("<polygon") != std::string::npos);
  CHECK(svg.find("stroke-dasharray=\"6 3\"") != std::string::npos);
  CHECK(svg.find("stroke-dasharray=\"2 2\"") != std::string::npos);
  // A legend entry longer than the chart is cut with an ellipsis; the full name stays as its tooltip.
  std::string long_name(120, 'n');
  auto legend = svg_line_chart("t", {"x0"}, {{long_name, {0.5}}}, 1.0);
  CHECK(legend.find("<title>" + long_name + "</title>" + std::string(79, 'n') + "\u2026</text>") != std::string::npos);
  // A missing value (k beyond the samples) leaves no point.
  auto gap = svg_line_chart("t", {"x0", "x1"}, {{"a", {0.5, std::nan("")}}}, 1.0);
  CHECK(gap.find("nan") == std::string::npos);
}

TEST_CASE("the terminal report escapes control characters of model and task names") {
  // A model name from a config or a server, written raw, could clear or rewrite the terminal.
  auto f = testing::make_fixture_db("report_ctrl", "evil\x1b[2J\rname\xc2\x9b");
  auto groups = compute_metrics(load_experiments(*f.store, {}));
  const std::string text = format_report_text(groups);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find("\xc2\x9b") == std::string::npos);
  CHECK(text.find("evil\\x1b[2J\\x0dname\\xc2\\x9b") != std::string::npos);
  CHECK(terminal_safe("plain \xce\xbc-name") == "plain \xce\xbc-name");  // UTF-8 stays
}

TEST_CASE("a task judged at the compile and SASS level only is marked so in every report") {
  experiment_data e;
  e.experiment.name = "x";
  e.experiment.model = "m";
  for (const char* task : {"gemm_bf16_tcgen05", "gemm_bf16_wgmma"}) {
    trajectory_data t;
    t.trajectory.task_id = task;
    t.trajectory.family = "gemm";
    turn_view v;
    evaluation_row row;
    row.verdict = "runtime";
    nlohmann::json stages = {{"format", {{"status", "passed"}}}, {"compile", {{"status", "passed"}}}};
    stages["runtime"] = std::string(task) == "gemm_bf16_tcgen05"
                            ? nlohmann::json{{"status", "not_run"},
                                             {"reason", "sm_100a task: not runnable on this Hopper GPU (" +
                                                            std::string(k_compile_and_static_only) + ")"}}
                            : nlohmann::json{{"status", "not_run"}, {"reason", "no GPU"}};
    row.result = {{"stages", stages}};
    v.evaluation = row;
    t.turns.push_back(v);
    e.trajectories.push_back(t);
  }
  auto groups = compute_metrics({e});
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].compile_and_static_only);
  CHECK_FALSE(groups[1].compile_and_static_only);
  const std::string text = format_report_text(groups);
  CHECK(text.find("gemm_bf16_tcgen05 *") != std::string::npos);
  CHECK(text.find("* judged at the compile and SASS level only") != std::string::npos);
  CHECK(render_report_json(groups, {}, "x.db")["groups"][0]["judged_at"] == "compile and SASS only");
  CHECK(render_report_json(groups, {}, "x.db")["groups"][1]["judged_at"] == "gpu");
  CHECK(render_report_html(groups, {}, "x.db").find("gemm_bf16_tcgen05 (compile and SASS only)") != std::string::npos);
}
