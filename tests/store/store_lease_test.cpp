// The writer lease of an experiment and the containment records: taken when
// free, refused while its holder lives, taken over from a gone holder, and
// lost to a take-over; judging attempts count up per candidate.
#include <doctest/doctest.h>

#include "store_test_util.hpp"

using namespace ptxbench;

namespace {
int64_t make_experiment(run_store& s, const std::string& name) {
  experiment_row e;
  e.name = name;
  e.config = nlohmann::json::object();
  e.evaluator_version = "v";
  e.host = "h";
  e.gpu = "none";
  e.model = "m";
  e.provider = "p";
  return s.create_experiment(e);
}
}  // namespace

TEST_CASE("lease: free - taken - refused while alive - taken over when gone - lost after a take-over") {
  store_test::temp_folder dir;
  auto a = run_store::open(dir / "run.db");
  auto b = run_store::open(dir / "run.db");  // a second process's connection
  const int64_t exp = make_experiment(*a, "x");
  auto alive = [](const lease_row&) { return true; };
  auto gone = [](const lease_row&) { return false; };
  CHECK_FALSE(a->lease(exp).has_value());
  CHECK_FALSE(a->acquire_lease(exp, "host-a", 100, alive).has_value());
  CHECK_FALSE(a->acquire_lease(exp, "host-a", 100, alive).has_value());  // already ours
  auto holder = b->acquire_lease(exp, "host-b", 200, alive);
  REQUIRE(holder.has_value());
  CHECK(holder->host == "host-a");
  CHECK(holder->pid == 100);
  CHECK(holder->heartbeat_age_s >= 0.0);
  CHECK(holder->heartbeat_age_s < 60.0);
  CHECK(a->renew_lease(exp, "host-a", 100));
  CHECK_FALSE(b->acquire_lease(exp, "host-b", 200, gone).has_value());  // taken over
  CHECK(b->lease(exp)->pid == 200);
  CHECK_FALSE(a->renew_lease(exp, "host-a", 100));  // a learns it lost the lease
  a->release_lease(exp, "host-a", 100);              // releases only its own
  CHECK(b->lease(exp)->pid == 200);
  b->release_lease(exp, "host-b", 200);
  CHECK_FALSE(a->lease(exp).has_value());
}

TEST_CASE("containment records: judge crashes count per candidate and sibling - agent errors and failed trajectories") {
  store_test::temp_folder dir;
  auto s = run_store::open(dir / "run.db");
  const int64_t exp = make_experiment(*s, "x");
  const int64_t traj = s->ensure_trajectory(exp, "t", "gemm", 0);
  turn_row turn;
  turn.trajectory_id = traj;
  candidate_row cand;
  const int64_t cand_id = *s->candidate_id(s->record_turn(turn, cand));
  const judge_subject candidate{judge_subject::kind::candidate, cand_id};
  const judge_subject sibling{judge_subject::kind::branch_reply, cand_id};  // the same id, another subject
  CHECK(s->judge_crashes(candidate) == 0);
  s->note_judge_crashes({{candidate, "SIGSEGV"}});
  s->note_judge_crashes({{candidate, "SIGABRT"}, {sibling, "SIGBUS"}});
  s->note_judge_crashes({});
  CHECK(s->judge_crashes(candidate) == 2);
  CHECK(s->judge_crashes(sibling) == 1);
  CHECK(s->judge_crashes({judge_subject::kind::candidate, cand_id + 1}) == 0);
  s->record_agent_error({0, traj, 0, "judge", "boom", ""});
  s->fail_trajectory(traj, 1);
  auto errors = s->agent_errors(exp);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].step == "judge");
  CHECK(errors[0].message == "boom");
  auto tr = s->trajectory(traj);
  CHECK(tr->status == "done");
  CHECK(tr->final_verdict == "error");
  CHECK_FALSE(tr->passed);
}
