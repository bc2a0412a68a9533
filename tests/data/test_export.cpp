#include <doctest/doctest.h>

#include <sstream>

#include "agent/data/export.hpp"
#include "evaluator/common/json_path.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;
using nlohmann::json;

namespace {

std::vector<json> bodies(const export_result& r) {
  std::vector<json> out;
  for (const auto& rec : r.records) out.push_back(rec.body);
  return out;
}

export_result run(run_store& store, export_kind kind, export_filter filter = {}, bool balance = false,
                  std::optional<int> per_cell = std::nullopt) {
  export_options o;
  o.kind = kind;
  o.format = export_format::messages;
  o.filter = filter;
  o.balance = balance;
  o.per_cell = per_cell;
  return build_export(store, o);
}

}  // namespace

TEST_CASE("correction examples pair a failed attempt and its feedback with the reply that got further") {
  auto f = testing::make_fixture_db("export");
  auto r = bodies(run(*f.store, export_kind::correction));
  // D r0->r1 (format->performance), A r0->r1, A r1->r2, B r1->r2; B r0->r1 did not improve.
  REQUIRE(r.size() == 4);
  const json& a1 = r[1];
  REQUIRE(a1["messages"].size() == 5);
  CHECK(a1["messages"][0] == json({{"role", "system"}, {"content", "SYS"}}));
  CHECK(a1["messages"][1] == json({{"role", "user"}, {"content", "TASK gemm_bf16_wgmma"}}));
  CHECK(a1["messages"][2] == json({{"role", "assistant"}, {"content", "reply A0"}}));
  CHECK(a1["messages"][3] == json({{"role", "user"}, {"content", "FEEDBACK 1 for gemm_bf16_wgmma"}}));
  CHECK(a1["messages"][4] == json({{"role", "assistant"}, {"content", "reply A1"}}));
  const json& p = a1["provenance"];
  CHECK(p["experiment"] == "exp1");
  CHECK(p["trajectory"] == f.trajectories["A"]);
  CHECK(p["round"] == 1);
  CHECK(p["failing_round"] == 0);
  CHECK(p["evaluator_version"] == "0.1.0");
  CHECK(p["task"] == "gemm_bf16_wgmma");
  CHECK(p["family"] == "gemm");
  CHECK(p["model"] == "m1");
  CHECK(p["failing_stage"] == "compile");
  CHECK(p["fix_stage"] == "correctness");

  CHECK(r[0]["provenance"]["failing_stage"] == "format");
  CHECK(r[0]["provenance"]["fix_stage"] == "performance");
  CHECK(r[2]["provenance"]["fix_stage"] == "passed");
  CHECK(r[2]["provenance"]["speedup"] == doctest::Approx(1.2));
  CHECK(r[3]["provenance"]["trajectory"] == f.trajectories["B"]);
  CHECK(r[3]["provenance"]["failing_round"] == 1);
}

TEST_CASE("export filters select by stage and family and model and speedup") {
  auto f = testing::make_fixture_db("export-filter");
  export_filter by_failure;
  by_failure.failing_stage = parse_verdict_rank("compile");
  CHECK(run(*f.store, export_kind::correction, by_failure).records.size() == 2);

  export_filter fixed;
  fixed.min_fix_stage = parse_verdict_rank("passed");
  auto passed = bodies(run(*f.store, export_kind::correction, fixed));
  REQUIRE(passed.size() == 1);
  CHECK(passed[0]["messages"][4]["content"] == "reply A2");

  export_filter family;
  family.families = {"attention_fwd"};
  CHECK(run(*f.store, export_kind::correction, family).records.size() == 1);

  export_filter fast;
  fast.min_speedup = 1.0;
  CHECK(run(*f.store, export_kind::correction, fast).records.size() == 1);

  export_filter other_model;
  other_model.models = {"m2"};
  CHECK(run(*f.store, export_kind::correction, other_model).records.empty());

  CHECK_THROWS_AS(run(*f.store, export_kind::sft, by_failure), input_error);
  CHECK_THROWS_AS(parse_verdict_rank("compiled"), input_error);
}

TEST_CASE("sft takes passing answers and preference pairs answers to one prompt") {
  auto f = testing::make_fixture_db("export-sft");
  auto sft = run(*f.store, export_kind::sft);
  auto s = bodies(sft);
  REQUIRE(s.size() == 2);
  CHECK(s[0]["messages"] == json::array({{{"role", "system"}, {"content", "SYS"}},
                                         {{"role", "user"}, {"content", "TASK attention_fwd_bf16_wgmma"}},
                                         {{"role", "assistant"}, {"content", "reply C0"}}}));
  CHECK(s[0]["provenance"]["failing_stage"].is_null());
  CHECK(s[0]["provenance"]["failing_round"].is_null());
  CHECK(s[1]["messages"].size() == 3);
  CHECK(s[1]["messages"][2]["content"] == "reply A2");
  CHECK(s[1]["provenance"]["failing_stage"] == "compile");
  CHECK(sft.coverage.at("attention_fwd").at("first_try") == 1);

  auto pref = bodies(run(*f.store, export_kind::preference));
  // Only the attention round-0 prompt has answers of different quality (C passed, D format).
  REQUIRE(pref.size() == 1);
  CHECK(pref[0]["prompt"] == testing::prompt_for("attention_fwd_bf16_wgmma", 0, ""));
  CHECK(pref[0]["chosen"] == json::array({{{"role", "assistant"}, {"content", "reply C0"}}}));
  CHECK(pref[0]["rejected"] == json::array({{{"role", "assistant"}, {"content", "reply D0"}}}));
  CHECK(pref[0]["provenance"]["failing_stage"] == "format");
  CHECK(pref[0]["provenance"]["fix_stage"] == "passed");
}

TEST_CASE("coverage counts family x failing stage and balance caps every cell deterministically") {
  auto f = testing::make_fixture_db("export-balance");
  auto all = run(*f.store, export_kind::correction);
  CHECK(all.coverage.at("gemm").at("compile") == 2);
  CHECK(all.coverage.at("gemm").at("correctness") == 1);
  CHECK(all.coverage.at("attention_fwd").at("format") == 1);
  CHECK(smallest_cell(all.coverage) == 1);

  auto balanced = run(*f.store, export_kind::correction, {}, true);
  CHECK(balanced.cap == 1);
  REQUIRE(balanced.records.size() == 3);
  CHECK(balanced.kept.at("gemm").at("compile") == 1);
  auto again = run(*f.store, export_kind::correction, {}, true);
  std::ostringstream first, second;
  write_jsonl(first, balanced.records);
  write_jsonl(second, again.records);
  CHECK(first.str() == second.str());

  CHECK(run(*f.store, export_kind::correction, {}, true, 2).records.size() == 4);
  auto table = format_coverage(balanced, true);
  CHECK(table.find("gemm") != std::string::npos);
  CHECK(table.find("1/2") != std::string::npos);
  CHECK(table.find("records written: 3 of 4") != std::string::npos);
}

TEST_CASE("every JSONL line is one JSON object in the chat messages format") {
  auto f = testing::make_fixture_db("export-jsonl");
  std::ostringstream out;
  write_jsonl(out, run(*f.store, export_kind::correction).records);
  std::istringstream in(out.str());
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    auto j = json::parse(line);
    REQUIRE(j["messages"].is_array());
    for (const auto& m : j["messages"]) {
      CHECK(m.size() == 2);
      CHECK(m["content"].is_string());
    }
    CHECK(j["messages"].back()["role"] == "assistant");
    ++lines;
  }
  CHECK(lines == 4);
}

TEST_CASE("a fix that stops failing the static instruction check counts although later stages did not pass") {
  // The static instruction check can fail before runtime runs (no GPU), and a
  // candidate passing it may end with runtime "not_run" or instructions
  // "unverified" (executed count unavailable) and a slow kernel.
  auto dir = testing::fresh_dir("export-order");
  auto store = run_store::open(dir / "runs.db");
  experiment_row e;
  e.name = "order";
  e.model = "m1";
  int64_t eid = store->create_experiment(e);
  auto with = [](const std::string& verdict, std::vector<stage_status> statuses, std::optional<double> speedup) {
    auto r = testing::make_result("format", speedup);
    r.verdict = parse_stage(verdict);
    for (int s = 0; s < stage_count; ++s) r.stages[static_cast<stage>(s)].status = statuses[s];
    return r;
  };
  using st = stage_status;
  auto static_failure = with("instructions", {st::passed, st::passed, st::not_run, st::not_run, st::failed, st::not_run}, {});
  auto not_run = with("runtime", {st::passed, st::passed, st::not_run, st::not_run, st::unverified, st::not_run}, {});
  auto gpu_failure = with("instructions", {st::passed, st::passed, st::passed, st::passed, st::failed, st::not_run}, {});
  auto slow = with("performance", {st::passed, st::passed, st::passed, st::passed, st::unverified, st::failed}, 0.89);
  std::vector<std::pair<evaluation_result, evaluation_result>> pairs{
      {static_failure, not_run}, {not_run, static_failure}, {gpu_failure, slow}, {slow, gpu_failure}};
  for (int sample = 0; sample < static_cast<int>(pairs.size()); ++sample) {
    int64_t tid = store->ensure_trajectory(eid, "gemm_bf16_mma_sync", "gemm", sample);
    for (int round = 0; round < 2; ++round) {
      turn_row t;
      t.trajectory_id = tid;
      t.round = round;
      t.messages = testing::prompt_for("gemm_bf16_mma_sync", round, "previous");
      t.reply = "reply " + std::to_string(sample) + std::to_string(round);
      candidate_row c;
      c.ptx = "ptx " + std::to_string(sample) + std::to_string(round);  // distinct: not near-duplicates
      store->record_turn(t, c);
      int64_t cid = store->turns(tid).back().candidate->id;
      const auto& r = round == 0 ? pairs[sample].first : pairs[sample].second;
      store->record_evaluation(data::evaluation_row_of(r, cid));
    }
  }
  auto r = run(*store, export_kind::correction);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].body["provenance"]["sample"] == 0);
  CHECK(r.records[0].body["provenance"]["failing_stage"] == "instructions");
  CHECK(r.records[0].body["provenance"]["fix_stage"] == "runtime");
  CHECK(r.records[1].body["provenance"]["sample"] == 2);
  CHECK(r.records[1].body["provenance"]["fix_stage"] == "performance");

  export_filter correct_fix;
  correct_fix.min_fix_stage = parse_verdict_rank("instructions");  // passed format..correctness
  auto fixed = run(*store, export_kind::correction, correct_fix);
  REQUIRE(fixed.records.size() == 1);
  CHECK(fixed.records[0].body["provenance"]["sample"] == 2);
}
