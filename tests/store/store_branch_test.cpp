// Siblings of branched repair rounds: written once per (trajectory, round,
// branch), verdicts filled in later, one chosen per round in one transaction.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include "tests/store/store_test_util.hpp"

using namespace ptxbench;
using namespace ptxbench::store_test;

namespace {

branch_reply_row sibling(int64_t trajectory, int round, int branch, const std::string& reply) {
  branch_reply_row b;
  b.branch = branch;
  b.turn.trajectory_id = trajectory;
  b.turn.round = round;
  b.turn.messages = nlohmann::json::array({{{"role", "user"}, {"content", "task"}}});
  b.turn.feedback = "Feedback on round 0";
  b.turn.feedback_detail = "full";
  b.turn.reply = reply;
  b.turn.reasoning = "thinking " + reply;
  b.turn.model = "m";
  b.turn.prompt_tokens = 10;
  b.turn.completion_tokens = 20 + branch;
  b.turn.latency_ms = 5.5;
  b.candidate.ptx = ".version 8.8\n// " + reply;
  b.candidate.manifest = "{}";
  return b;
}

evaluation_row verdict(const std::string& v, std::optional<double> speedup = std::nullopt) {
  evaluation_row e;
  e.evaluator_version = "0.1.0";
  e.gpu = "none";
  e.verdict = v;
  e.passed = v == "passed";
  e.speedup = speedup;
  e.result = {{"verdict", v}, {"headline", v}};
  return e;
}

}  // namespace

TEST_CASE("branch replies are written once per round and branch and fill in only what they lack") {
  temp_folder dir;
  const auto file = dir / "run.db";
  auto store = run_store::open(file);
  const int64_t exp = store->create_experiment(sample_experiment("b"));
  const int64_t traj = store->ensure_trajectory(exp, "softmax", "reduction", 0);
  CHECK(store->branch_replies(traj).empty());

  const int64_t a = store->record_branch_reply(sibling(traj, 1, 0, "first"));
  const int64_t b = store->record_branch_reply(sibling(traj, 1, 1, "second"));
  CHECK(a != b);
  // The same (trajectory, round, branch) again: the stored sibling is kept as it was.
  CHECK(store->record_branch_reply(sibling(traj, 1, 0, "a different reply")) == a);
  CHECK(sql_count(file, "SELECT count(*) FROM branch_replies") == 2);
  auto rows = store->branch_replies(traj);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].turn.reply == "first");
  CHECK(rows[0].turn.reasoning == "thinking first");
  CHECK(rows[0].turn.messages == sibling(traj, 1, 0, "").turn.messages);
  CHECK(rows[0].turn.feedback == "Feedback on round 0");
  CHECK(rows[1].turn.completion_tokens == 21);
  CHECK_FALSE(rows[0].candidate.normalised_hash.empty());  // fingerprinted like a turn's candidate
  CHECK_FALSE(rows[0].evaluation);
  CHECK_FALSE(rows[0].chosen);

  store->record_branch_evaluation(a, verdict("compile"));
  store->record_branch_evaluation(a, verdict("passed"));  // judged already: left as it is
  store->record_branch_evaluation(b, verdict("correctness", 1.5));
  rows = store->branch_replies(traj);
  REQUIRE(rows[0].evaluation);
  CHECK(rows[0].evaluation->verdict == "compile");
  REQUIRE(rows[1].evaluation);
  CHECK(rows[1].evaluation->speedup == doctest::Approx(1.5));
  CHECK(rows[1].evaluation->result["headline"] == "correctness");
  CHECK_FALSE(rows[1].evaluation->created_at.empty());

  // Choosing writes the sibling as the round's turn with its candidate and evaluation.
  const int64_t turn_id = store->choose_branch(traj, 1, 1);
  auto turns = store->turns(traj);
  REQUIRE(turns.size() == 1);
  CHECK(turns[0].turn.id == turn_id);
  CHECK(turns[0].turn.round == 1);
  CHECK(turns[0].turn.reply == "second");
  CHECK(turns[0].turn.reasoning == "thinking second");
  CHECK(turns[0].turn.feedback == "Feedback on round 0");
  REQUIRE(turns[0].candidate);
  CHECK(turns[0].candidate->ptx == ".version 8.8\n// second");
  REQUIRE(turns[0].evaluation);
  CHECK(turns[0].evaluation->verdict == "correctness");
  CHECK(turns[0].evaluation->speedup == doctest::Approx(1.5));
  rows = store->branch_replies(traj);
  CHECK_FALSE(rows[0].chosen);
  CHECK(rows[1].chosen);
  // Chosen once: another choice for the round writes nothing.
  CHECK(store->choose_branch(traj, 1, 0) == turn_id);
  CHECK(store->turns(traj).at(0).turn.reply == "second");
  CHECK(sql_count(file, "SELECT count(*) FROM branch_replies WHERE chosen = 1") == 1);
  CHECK(sql_count(file, "SELECT count(*) FROM evaluations") == 1);

  // A sibling that is missing or not judged cannot be chosen.
  store->record_branch_reply(sibling(traj, 2, 0, "unjudged"));
  CHECK_THROWS_AS(store->choose_branch(traj, 2, 0), store_error);
  CHECK_THROWS_AS(store->choose_branch(traj, 2, 5), store_error);
  CHECK(store->turns(traj).size() == 1);

  // A merge copies a sibling whole: verdict and chosen flag with it.
  const int64_t other = store->ensure_trajectory(exp, "softmax", "reduction", 1);
  branch_reply_row copy = store->branch_replies(traj).at(1);
  copy.turn.trajectory_id = other;
  store->record_branch_reply(copy);
  auto copied = store->branch_replies(other);
  REQUIRE(copied.size() == 1);
  CHECK(copied[0].chosen);
  REQUIRE(copied[0].evaluation);
  CHECK(copied[0].evaluation->result == copy.evaluation->result);
  CHECK(copied[0].turn.created_at == copy.turn.created_at);
}

TEST_CASE("a database without branch_replies gets the table on open - a read-only open reads none") {
  temp_folder dir;
  const auto file = dir / "old.db";
  int64_t traj = 0;
  {
    auto store = run_store::open(file);
    const int64_t exp = store->create_experiment(sample_experiment("old"));
    traj = store->ensure_trajectory(exp, "softmax", "reduction", 0);
  }
  // As an older ptxbench left it.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "DROP TABLE branch_replies", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  {
    auto reader = run_store::open(file, true);
    CHECK(reader->branch_replies(traj).empty());
  }
  auto store = run_store::open(file);
  CHECK(sql_count(file, "SELECT count(*) FROM sqlite_master WHERE name = 'branch_replies'") == 1);
  store->record_branch_reply(sibling(traj, 1, 0, "x"));
  CHECK(store->branch_replies(traj).size() == 1);
}
