#include <doctest/doctest.h>

#include "agent/data/metrics.hpp"
#include "agent/data/report.hpp"
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
