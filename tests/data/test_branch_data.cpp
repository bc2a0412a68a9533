// The data products of branched runs (run --branch N): preference pairs from
// the siblings of a round, replay of the siblings, the report by LLM calls.
// Preference pairs:
// one prompt, chosen = got further or faster, ties and errors make no pair,
// provenance says round, branches and the rule that decided.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "agent/data/export.hpp"
#include "agent/data/report.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;
using namespace ptxbench::testing;

namespace {

struct sibling_spec {
  std::string verdict;  // "" unjudged, "error" an evaluator error
  std::optional<double> speedup;
};

evaluation_row sibling_evaluation(const sibling_spec& s) {
  if (s.verdict == "error") {
    evaluation_result r = make_result("runtime");
    r.stages[stage::runtime] = {stage_status::error, "evaluator failure: worker lost", 0.0};
    r.headline = "evaluator error at runtime";
    return evaluation_row_of(r, 0);
  }
  return evaluation_row_of(make_result(s.verdict, s.speedup), 0);
}

// Trajectory with a round-0 turn (compile) and one branched round per entry of
// `rounds`; the sibling `chosen[r]` of each is chosen.
int64_t add_branched(run_store& store, int64_t experiment, int sample, const std::vector<std::vector<sibling_spec>>& rounds,
                     const std::vector<int>& chosen) {
  const std::string task = "gemm_bf16_wgmma";
  const int64_t tid = store.ensure_trajectory(experiment, task, "gemm", sample);
  turn_row t0;
  t0.trajectory_id = tid;
  t0.messages = prompt_for(task, 0, "");
  t0.reply = "reply round 0";
  t0.model = "m1";
  candidate_row c0;
  c0.ptx = "// round 0 s" + std::to_string(sample) + "\n.version 8.5\nline r0s" + std::to_string(sample) + "\n";
  store.record_turn(t0, c0);
  auto v = store.turns(tid).front();
  store.record_evaluation(evaluation_row_of(make_result("compile"), v.candidate->id));
  std::string previous = t0.reply;
  for (size_t r = 0; r < rounds.size(); ++r) {
    const int round = static_cast<int>(r) + 1;
    for (size_t b = 0; b < rounds[r].size(); ++b) {
      branch_reply_row row;
      row.branch = static_cast<int>(b);
      row.turn.trajectory_id = tid;
      row.turn.round = round;
      row.turn.messages = prompt_for(task, round, previous);
      row.turn.feedback = "feedback text " + std::to_string(round);
      row.turn.feedback_detail = "full";
      row.turn.reply = "reply s" + std::to_string(sample) + " round " + std::to_string(round) + " branch " + std::to_string(b);
      row.turn.reasoning = "why " + row.turn.reply;
      row.turn.model = "m1";
      row.candidate.ptx = "// " + row.turn.reply + "\n.version 8.5\nline " + row.turn.reply + "\n";
      row.candidate.manifest = "{\"launches\": []}";
      if (!rounds[r][b].verdict.empty()) row.evaluation = sibling_evaluation(rounds[r][b]);
      store.record_branch_reply(row);
    }
    store.choose_branch(tid, round, chosen[r]);
    previous = store.turns(tid).back().turn.reply;
  }
  store.finish_trajectory(tid, "passed", true, static_cast<int>(rounds.size()) + 1);
  return tid;
}

struct branched_db {
  std::filesystem::path dir;
  std::unique_ptr<run_store> store;
  int64_t trajectory = 0;
};

branched_db make_branched_db() {
  branched_db f;
  f.dir = fresh_dir("branch-export");
  f.store = run_store::open(f.dir / "runs.db");
  experiment_row e;
  e.name = "br";
  e.config = {{"rounds", 3}, {"branch", 4}};
  e.evaluator_version = "0.1.0";
  e.model = "m1";
  f.store->create_experiment(e);
  const int64_t exp = f.store->find_experiment("br")->id;
  // Round 1: correctness, passed 1.1, passed 1.5 (chosen), an evaluator error.
  // Round 2: passed 1.5, passed 1.5 (a tie), unjudged, passed 1.2.
  f.trajectory = add_branched(*f.store, exp, 0,
                              {{{"correctness"}, {"passed", 1.1}, {"passed", 1.5}, {"error"}},
                               {{"passed", 1.5}, {"passed", 1.5}, {""}, {"passed", 1.2}}},
                              {2, 0});
  return f;
}

std::vector<nlohmann::json> bodies(const std::vector<export_record>& records) {
  std::vector<nlohmann::json> out;
  for (const auto& r : records) out.push_back(r.body);
  return out;
}

}  // namespace

TEST_CASE("siblings of a branched round pair on their shared prompt - chosen got further or was faster") {
  auto f = make_branched_db();
  export_options o;
  o.kind = export_kind::preference;
  o.reasoning = reasoning_mode::field;
  auto result = build_export(*f.store, o);
  auto rows = bodies(result.records);
  for (const auto& r : rows) check_record_schema(r, o);
  std::vector<nlohmann::json> round1, round2;
  for (const auto& r : rows) (r["provenance"]["round"] == 1 ? round1 : round2).push_back(r);
  // Round 1, best first: passed 1.5 (b2), passed 1.1 (b1), correctness (b0); the
  // error (b3) is in no pair. Best pairs with worst: b2 over b0, by stage.
  REQUIRE(round1.size() == 1);
  const auto& p = round1[0]["provenance"];
  CHECK(p["branch"] == 2);
  CHECK(p["rejected_branch"] == 0);
  CHECK(p["rejected_round"] == 1);
  CHECK(p["rejected_trajectory"] == f.trajectory);
  CHECK(p["pair"] == "siblings");
  CHECK(p["decided_by"] == "stage");
  CHECK(p["fix_stage"] == "passed");
  CHECK(p["failing_stage"] == "correctness");
  CHECK(p["speedup"] == doctest::Approx(1.5));
  CHECK(round1[0]["chosen"][0]["content"] == "reply s0 round 1 branch 2");
  CHECK(round1[0]["chosen"][0]["reasoning_content"] == "why reply s0 round 1 branch 2");
  CHECK(round1[0]["rejected"][0]["content"] == "reply s0 round 1 branch 0");
  // The prompt is the conversation state before the round, as every sibling was sent it.
  CHECK(round1[0]["prompt"].size() == 4);
  CHECK(round1[0]["prompt"][2]["content"] == "reply round 0");
  // Round 2, best first: 1.5 (b0), 1.5 (b1), 1.2 (b3); the unjudged b2 is out.
  // b0 over b3 by speedup; b1 is left in the middle (i == j).
  REQUIRE(round2.size() == 1);
  const auto& q = round2[0]["provenance"];
  CHECK(q["branch"] == 0);
  CHECK(q["rejected_branch"] == 3);
  CHECK(q["decided_by"] == "speedup");
  CHECK(q["rejected_speedup"] == doctest::Approx(1.2));
  CHECK(round2[0]["prompt"][2]["content"] == "reply s0 round 1 branch 2");  // continued from the chosen one
}

TEST_CASE("siblings that tie make no pair - round 0 samples still pair as before with branch null") {
  auto f = make_branched_db();
  const int64_t exp = f.store->find_experiment("br")->id;
  // A second trajectory: its round 0 (same prompt as the first's) failed at format.
  const std::string task = "gemm_bf16_wgmma";
  const int64_t tid = f.store->ensure_trajectory(exp, task, "gemm", 1);
  turn_row t0;
  t0.trajectory_id = tid;
  t0.messages = prompt_for(task, 0, "");
  t0.reply = "no manifest";
  t0.model = "m1";
  candidate_row c0;
  c0.format_problem = "no ```json block";
  f.store->record_turn(t0, c0);
  f.store->record_evaluation(evaluation_row_of(make_result("format"), f.store->turns(tid).front().candidate->id));
  // Round 1: two siblings with the same verdict and speedup: a tie.
  branch_reply_row a;
  a.turn.trajectory_id = tid;
  a.turn.round = 1;
  a.turn.messages = prompt_for(task, 1, "no manifest");
  a.turn.reply = "tie a";
  a.candidate.ptx = "// a\nline a\n";
  a.evaluation = evaluation_row_of(make_result("compile"), 0);
  branch_reply_row b = a;
  b.branch = 1;
  b.turn.reply = "tie b";
  b.candidate.ptx = "// b\nline b\n";
  f.store->record_branch_reply(a);
  f.store->record_branch_reply(b);
  f.store->choose_branch(tid, 1, 0);

  export_options o;
  o.kind = export_kind::preference;
  auto rows = bodies(build_export(*f.store, o).records);
  int round0 = 0;
  for (const auto& r : rows) {
    check_record_schema(r, o);
    const auto& p = r["provenance"];
    CHECK(p["trajectory"] != tid);  // the tie of trajectory 1's round 1 is no pair
    if (p["round"] == 0) {
      ++round0;
      CHECK(p["branch"].is_null());
      CHECK(p["rejected_branch"].is_null());
      CHECK(p["pair"] == "samples");
      CHECK(p["decided_by"] == "stage");
      CHECK(p["rejected_trajectory"] == tid);
    }
  }
  CHECK(round0 == 1);
  CHECK(rows.size() == 3);
}

TEST_CASE("a branched export writes a dataset card whose features list the branch columns") {
  auto f = make_branched_db();
  export_options o;
  o.kind = export_kind::preference;
  auto result = build_export(*f.store, o);
  REQUIRE(result.records.size() == 2);
  write_export_dir(f.dir / "out", result, o, {(f.dir / "runs.db").string(), {*f.store->find_experiment("br")}});
  std::ifstream in(f.dir / "out" / "README.md");
  std::stringstream card;
  card << in.rdbuf();
  for (const char* column : {"branch", "rejected_branch", "pair", "decided_by"})
    CHECK(card.str().find(std::string("    - name: ") + column + "\n") != std::string::npos);
  CHECK(card.str().find("siblings of a branched repair round") != std::string::npos);
  // Correction and sft records come from the main line, one turn per round.
  o.kind = export_kind::correction;
  auto corrections = build_export(*f.store, o).records;
  for (const auto& r : corrections) CHECK(r.body["completion"][0]["content"].get<std::string>().find("branch") != std::string::npos);
  CHECK(corrections.size() == 1);  // round 0 compile -> round 1 passed (b2)
}

namespace {
// Judges every candidate "compile", except those whose PTX names "branch 1": "correctness".
class replay_judge : public evaluator {
 public:
  evaluation_result evaluate(const evaluation_request& request) override {
    ++calls;
    auto r = make_result(request.ptx.find("branch 1") != std::string::npos ? "correctness" : "compile");
    r.evaluator_version = version();
    return r;
  }
  std::string version() const override { return "9.9.9"; }
  std::string gpu_description() const override { return "none"; }
  int calls = 0;
};
}  // namespace

TEST_CASE("replay copies the siblings with the run's choice - judges the others again - the chosen takes its turn's verdict") {
  auto f = make_branched_db();
  auto target = run_store::open(f.dir / "replayed.db");
  replay_judge judge;
  replay_options o;
  o.experiment = "br";
  auto s = replay_experiment(*f.store, *target, judge, [](const std::string& id) {
    task t;
    t.id = id;
    t.family = "gemm";
    return std::optional<task>(t);
  }, o);
  // 3 turns, and the 6 siblings that were not chosen.
  CHECK(s.candidates == 9);
  CHECK(judge.calls == 9);
  CHECK(s.problems.empty());
  auto exp = target->find_experiment("br-replay");
  REQUIRE(exp);
  auto tr = target->trajectories(exp->id).at(0);
  auto siblings = target->branch_replies(tr.id);
  REQUIRE(siblings.size() == 8);
  auto turns = target->turns(tr.id);
  REQUIRE(turns.size() == 3);
  for (const auto& b : siblings) {
    INFO("round " << b.turn.round << " branch " << b.branch);
    REQUIRE(b.evaluation);
    CHECK(b.evaluation->evaluator_version == "9.9.9");
    CHECK(b.evaluation->verdict == (b.branch == 1 ? "correctness" : "compile"));
    if (b.chosen) CHECK(b.evaluation->result == turns[b.turn.round].evaluation->result);
  }
  CHECK(siblings[2].chosen);  // round 1 branch 2, as in the run
  // A sibling whose verdict changed is listed with its branch.
  bool listed = false;
  for (const auto& c : s.changes) listed = listed || (c.round == 1 && c.branch == 1 && c.new_verdict == "correctness");
  CHECK(listed);
  CHECK(format_replay_summary(s).find("round 1 branch 1: passed -> correctness") != std::string::npos);
}

TEST_CASE("the report compares experiments by LLM calls per trajectory - every sibling is a call") {
  auto f = make_branched_db();
  // A second experiment without branching: compile, then passed at its second call.
  experiment_row e;
  e.name = "plain";
  e.config = {{"rounds", 2}};
  e.evaluator_version = "0.1.0";
  e.model = "m1";
  const int64_t plain = f.store->create_experiment(e);
  add_trajectory(*f.store, plain, "gemm_bf16_wgmma", "gemm", 0, "P", {{"compile"}, {"passed", 1.3}});
  auto experiments = load_experiments(*f.store, {"plain", "br"});
  auto curves = compute_calls_curves(experiments);
  REQUIRE(curves.size() == 2);
  const auto& p = curves[0];
  CHECK(p.experiment == "plain");
  CHECK(p.branch == 1);
  CHECK(p.llm_calls == 2);
  REQUIRE(p.points.size() == 2);
  CHECK(p.points[0].at.compiled == 0.0);
  CHECK(p.points[1].at.passed == 1.0);
  const auto& b = curves[1];
  CHECK(b.branch == 4);
  CHECK(b.rounds == 3);
  // Round 0, then 4 + 4 siblings: the chosen ones are not counted twice.
  CHECK(b.llm_calls == 9);
  REQUIRE(b.points.size() == 9);
  CHECK(b.points[0].at.compiled == 0.0);       // round 0 failed to compile
  CHECK(b.points[1].at.compiled == 1.0);       // round 1 branch 0: correctness
  CHECK(b.points[1].at.passed == 0.0);
  CHECK(b.points[1].no_failed_stage == 0.0);
  CHECK(b.points[2].at.passed == 1.0);         // round 1 branch 1 passed
  CHECK(b.points[2].no_failed_stage == 1.0);
  CHECK(b.points[8].at.passed == 1.0);         // best so far never falls
  CHECK(b.points[2].at.fast_p[fast_1_index] == 1.0);

  auto groups = compute_metrics(experiments);
  const auto text = format_report_text(groups, curves);
  CHECK(text.find("by LLM calls per trajectory") != std::string::npos);
  CHECK(text.find("br: branch 4, 3 rounds, 1 trajectories, 9 LLM calls (9.0 per trajectory)") != std::string::npos);
  auto json = render_report_json(groups, {experiments[0].experiment, experiments[1].experiment}, "x.db", curves);
  REQUIRE(json["by_llm_calls"].size() == 2);
  CHECK(json["by_llm_calls"][1]["branch"] == 4);
  CHECK(json["by_llm_calls"][1]["points"].size() == 9);
  CHECK(json["by_llm_calls"][1]["points"][2]["passed"] == 1.0);
  CHECK(json["by_llm_calls"][0]["calls_per_trajectory"] == 2.0);
  const auto html = render_report_html(groups, {experiments[0].experiment}, "x.db", curves);
  CHECK(html.find("By LLM calls per trajectory") != std::string::npos);
  CHECK(html.find("calls_passed") != std::string::npos);
  // Without curves the report is as before.
  CHECK(format_report_text(groups).find("by LLM calls") == std::string::npos);
}
