#include <doctest/doctest.h>

#include "../data/fixture_db.hpp"
#include "agent/viewer/app.hpp"
#include "agent/viewer/pages.hpp"

using namespace ptxbench;
using namespace ptxbench::viewer;

namespace {
const std::string evil = "<script>document.title='pwned'</script><img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">";
}

TEST_CASE("viewer pages list experiments and trajectories and show each round") {
  auto f = testing::make_fixture_db("viewer-app", "m1", evil);
  viewer_app app(*f.store);
  auto home = app.get("/");
  CHECK(home.status == 200);
  CHECK(home.body.find("exp1") != std::string::npos);

  auto exp = app.get("/experiments/" + std::to_string(f.experiment_id));
  CHECK(exp.status == 200);
  CHECK(exp.body.find("gemm_bf16_wgmma") != std::string::npos);
  CHECK(exp.body.find("<span class=\"badge passed\">passed</span>") != std::string::npos);
  CHECK(exp.body.find("<span class=\"badge runtime\">runtime</span>") != std::string::npos);

  auto traj = app.get("/trajectories/" + std::to_string(f.trajectories["A"]));
  CHECK(traj.status == 200);
  CHECK(traj.body.find("FEEDBACK 1 for gemm_bf16_wgmma") != std::string::npos);
  CHECK(traj.body.find("feedback text 2") != std::string::npos);
  CHECK(traj.body.find("reply A2") != std::string::npos);
  CHECK(traj.body.find("<table class=\"diff\">") != std::string::npos);
  CHECK(traj.body.find("<tr class=\"removed\"><td class=\"ln\">1</td><td class=\"ln\"></td><td>-// ptx A0") !=
        std::string::npos);
  CHECK(traj.body.find("<tr class=\"added\"><td class=\"ln\"></td><td class=\"ln\">1</td><td>+// ptx A1") !=
        std::string::npos);
  CHECK(traj.body.find("correctness: headline") != std::string::npos);

  auto report = app.get("/experiments/" + std::to_string(f.experiment_id) + "/report");
  CHECK(report.status == 200);
  CHECK(report.body.find("<svg") != std::string::npos);
}

TEST_CASE("viewer escapes everything a model wrote") {
  auto f = testing::make_fixture_db("viewer-escape", "m1", evil);
  viewer_app app(*f.store);
  auto page = app.get("/trajectories/" + std::to_string(f.trajectories["C"]));
  CHECK(page.status == 200);
  CHECK(page.body.find("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;") != std::string::npos);
  CHECK(page.body.find("<script>document") == std::string::npos);
  CHECK(page.body.find("<img") == std::string::npos);
  auto api = app.get("/api/trajectories/" + std::to_string(f.trajectories["C"]));
  CHECK(api.content_type.rfind("application/json", 0) == 0);
  CHECK(nlohmann::json::parse(api.body)["turns"][0]["reply"] == evil);
}

TEST_CASE("viewer answers bad input with 400 and unknown things with 404 and never throws") {
  auto f = testing::make_fixture_db("viewer-errors");
  viewer_app app(*f.store);
  CHECK(app.get("/experiments/abc").status == 400);
  CHECK(app.get("/experiments/-1").status == 400);
  CHECK(app.get("/trajectories/99999999999999999999999").status == 400);
  CHECK(app.get("/experiments/999").status == 404);
  CHECK(app.get("/trajectories/999").status == 404);
  CHECK(app.get("/nothing/here").status == 404);
  CHECK(app.get("/assets/missing.css").status == 404);
  auto api = app.get("/api/trajectories/999");
  CHECK(api.status == 404);
  CHECK(nlohmann::json::parse(api.body).contains("error"));
  auto bad = app.get("/experiments/<script>");
  CHECK(bad.status == 400);
  CHECK(bad.body.find("<script>") == std::string::npos);
}

TEST_CASE("viewer JSON API lists experiments and trajectories") {
  auto f = testing::make_fixture_db("viewer-api");
  viewer_app app(*f.store);
  auto list = nlohmann::json::parse(app.get("/api/experiments").body);
  REQUIRE(list.size() == 1);
  CHECK(list[0]["name"] == "exp1");
  CHECK(list[0]["trajectories"] == 4);
  CHECK(list[0]["passed"] == 2);
  auto detail = nlohmann::json::parse(app.get("/api/experiments/" + std::to_string(f.experiment_id)).body);
  CHECK(detail["trajectories"].size() == 4);
  auto traj = nlohmann::json::parse(app.get("/api/trajectories/" + std::to_string(f.trajectories["A"])).body);
  REQUIRE(traj["turns"].size() == 3);
  CHECK(traj["turns"][2]["evaluation"]["verdict"] == "passed");
  CHECK(traj["turns"][2]["evaluation"]["speedup"] == doctest::Approx(1.2));
  CHECK(traj["turns"][1]["feedback"] == "feedback text 1");
  auto css = app.get("/assets/style.css");
  CHECK(css.status == 200);
  CHECK(css.content_type.find("text/css") == 0);
  CHECK(css.body.find(".badge") != std::string::npos);
}

TEST_CASE("viewer answers 400 to an id holding invalid UTF-8") {
  auto f = testing::make_fixture_db("viewer-app-utf8", "m1", "reply");
  viewer_app app(*f.store);
  // cpp-httplib decodes /api/experiments/%ff to this path before routing.
  for (const std::string path : {"/api/experiments/\xff", "/experiments/\xff", "/api/trajectories/\xc3"}) {
    auto r = app.get(path);
    CHECK(r.status == 400);
    if (path.rfind("/api/", 0) == 0) CHECK(nlohmann::json::parse(r.body).contains("error"));
  }
}

TEST_CASE("a verdict stage that did not run gets a grey not run badge and never the failure colour") {
  auto r = testing::make_result("format");
  r.verdict = stage::runtime;
  for (int s = 0; s < stage_count; ++s) r.stages[static_cast<stage>(s)].status = s < 2 ? stage_status::passed : stage_status::not_run;
  auto row = data::evaluation_row_of(r, 1);
  CHECK(evaluation_badge(row) == "<span class=\"badge not-run\">runtime not run</span>");
  r.stages[stage::runtime].status = stage_status::failed;
  CHECK(evaluation_badge(data::evaluation_row_of(r, 1)) == "<span class=\"badge runtime\">runtime</span>");
  CHECK(evaluation_badge(std::nullopt) == "<span class=\"badge none\">none</span>");
}

TEST_CASE("a runtime stage that did not run is never shown with the runtime failure colour - whatever name the row stored") {
  auto r = testing::make_result("format");
  r.verdict = stage::runtime;
  for (int s = 0; s < stage_count; ++s) r.stages[static_cast<stage>(s)].status = s < 2 ? stage_status::passed : stage_status::not_run;
  auto written = data::evaluation_row_of(r, 1);
  CHECK(written.verdict == "partial");
  CHECK(badge(written.verdict) == "<span class=\"badge partial\">partial</span>");
  auto old_row = written;
  old_row.verdict = "runtime";  // as a row written before partial verdicts existed names it
  for (const auto& row : {written, old_row}) {
    CAPTURE(row.verdict);
    const std::string section = evaluation_section(row);
    CHECK(section.find("badge runtime") == std::string::npos);
    CHECK(section.find("<span class=\"badge not-run\">runtime not run</span>") != std::string::npos);
    trajectory_row t;
    t.task_id = "gemm_bf16_mma_sync";
    t.status = "done";
    t.final_verdict = row.verdict;
    turn_view v;
    v.turn.round = 0;
    v.evaluation = row;
    const std::string page = trajectory_page(experiment_row{}, t, {v});
    CHECK(page.find("badge runtime") == std::string::npos);
    CHECK(page.find("badge not-run") != std::string::npos);
  }
}
