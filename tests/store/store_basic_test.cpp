#include <doctest/doctest.h>

#include "tests/store/store_test_util.hpp"

using namespace ptxbench;
using namespace ptxbench::store_test;

namespace {

turn_row sample_turn(int64_t trajectory_id, int round) {
  turn_row t;
  t.trajectory_id = trajectory_id;
  t.round = round;
  t.messages = nlohmann::json::array({{{"role", "system"}, {"content", "You write PTX for sm_90a."}},
                                      {{"role", "user"}, {"content", "Écris un noyau — 核函数 🚀 e\u0301"}}});
  t.feedback = round == 0 ? "" : "compile: ptxas error at line 3";
  t.feedback_detail = "full";
  t.reply = std::string("```ptx\n.version 8.8\n```\nbyte zero:") + '\0' + "end";
  t.reasoning = "think about coalescing";
  t.finish_reason = "stop";
  t.model = "qwen3-coder";
  t.prompt_tokens = 1200;
  t.completion_tokens = 800;
  t.reasoning_tokens = 300;
  t.latency_ms = 1234.5;
  return t;
}

candidate_row sample_candidate(size_t ptx_bytes) {
  candidate_row c;
  c.ptx = ".version 8.8\n.target sm_90a\n";
  while (c.ptx.size() < ptx_bytes) c.ptx += "  mad.lo.s32 %r1, %r2, %r3, %r4; // ✓\n";
  c.manifest = R"({"kernel": "vector_add", "block": [256, 1, 1]})";
  return c;
}

}  // namespace

TEST_CASE("open creates the folder and a WAL database with its schema version") {
  temp_folder dir;
  const auto file = dir / "runs/nested/run.db";
  auto store = run_store::open(file);
  CHECK(store->path() == file);
  CHECK(sql_text(file, "PRAGMA journal_mode") == "wal");
  CHECK(sql_text(file, "SELECT value FROM meta WHERE key = 'schema_version'") == "1");
  for (const char* table : {"experiments", "trajectories", "turns", "candidates", "evaluations", "llm_failures"})
    CHECK(sql_count(file, std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + table + "'") == 1);
  // Opening again keeps what is there.
  store->create_experiment(sample_experiment("a"));
  store.reset();
  CHECK(run_store::open(file)->experiments().size() == 1);
}

TEST_CASE("experiments are created - found by name and id - and a duplicate name is refused") {
  temp_folder dir;
  auto store = run_store::open(dir / "run.db");
  const int64_t a = store->create_experiment(sample_experiment("first"));
  experiment_row replay = sample_experiment("second");
  replay.kind = "replay";
  replay.parent_experiment_id = 7;
  replay.parent_database = "runs/old.db";
  const int64_t b = store->create_experiment(replay);
  CHECK(a != b);

  const auto found = store->find_experiment("first");
  REQUIRE(found);
  CHECK(found->id == a);
  CHECK(found->config == sample_experiment("x").config);
  CHECK(found->gpu == "NVIDIA H200");
  CHECK(found->status == "running");
  CHECK(found->created_at.size() == 24);
  CHECK(found->created_at.back() == 'Z');
  CHECK(found->finished_at.empty());
  CHECK_FALSE(found->parent_experiment_id);
  const auto second = store->experiment(b);
  REQUIRE(second);
  CHECK(second->kind == "replay");
  CHECK(second->parent_experiment_id == 7);
  CHECK(second->parent_database == "runs/old.db");
  CHECK_FALSE(store->find_experiment("missing"));
  CHECK_FALSE(store->experiment(999));
  CHECK(store->experiments().size() == 2);

  try {
    store->create_experiment(sample_experiment("first"));
    FAIL("a duplicate name was accepted");
  } catch (const store_error& e) {
    CHECK(std::string(e.what()).find("run.db") != std::string::npos);
    CHECK(std::string(e.what()).find("'first' exists already") != std::string::npos);
  }
  CHECK(store->experiments().size() == 2);

  store->set_experiment_status(a, "done");
  CHECK(store->experiment(a)->status == "done");
  CHECK_FALSE(store->experiment(a)->finished_at.empty());
  store->set_experiment_status(a, "running");  // resumed
  CHECK(store->experiment(a)->finished_at.empty());
  CHECK_THROWS_AS(store->set_experiment_status(999, "done"), store_error);
}

TEST_CASE("ensure_trajectory is idempotent and finish_trajectory records the outcome") {
  temp_folder dir;
  auto store = run_store::open(dir / "run.db");
  const int64_t exp = store->create_experiment(sample_experiment("e"));
  const int64_t t0 = store->ensure_trajectory(exp, "vector_add", "elementwise", 0);
  CHECK(store->ensure_trajectory(exp, "vector_add", "elementwise", 0) == t0);
  const int64_t t1 = store->ensure_trajectory(exp, "vector_add", "elementwise", 1);
  CHECK(t1 != t0);
  REQUIRE(store->trajectories(exp).size() == 2);
  CHECK(store->trajectory(t0)->status == "pending");
  CHECK(store->trajectory(t0)->final_verdict.empty());

  store->finish_trajectory(t0, "correctness", false, 3);
  const auto done = store->trajectory(t0);
  REQUIRE(done);
  CHECK(done->status == "done");
  CHECK(done->final_verdict == "correctness");
  CHECK_FALSE(done->passed);
  CHECK(done->rounds_done == 3);
  CHECK(done->task_id == "vector_add");
  CHECK(done->family == "elementwise");
  CHECK_FALSE(store->trajectory(12345));
  CHECK_THROWS_AS(store->finish_trajectory(12345, "passed", true, 1), store_error);
}

TEST_CASE("a turn and its candidate round-trip exactly: JSON messages - unicode - 2 MB of PTX - NUL bytes") {
  temp_folder dir;
  auto store = run_store::open(dir / "run.db");
  const int64_t traj = store->ensure_trajectory(store->create_experiment(sample_experiment("e")), "t", "f", 0);
  const turn_row turn = sample_turn(traj, 0);
  const candidate_row candidate = sample_candidate(2 << 20);
  const int64_t turn_id = store->record_turn(turn, candidate);

  const auto views = store->turns(traj);
  REQUIRE(views.size() == 1);
  const turn_row& got = views[0].turn;
  CHECK(got.id == turn_id);
  CHECK(got.messages == turn.messages);
  CHECK(got.messages[1]["content"] == "Écris un noyau — 核函数 🚀 e\u0301");
  CHECK(got.reply == turn.reply);
  CHECK(got.reply.size() == turn.reply.size());
  CHECK(got.reasoning == turn.reasoning);
  CHECK(got.feedback_detail == "full");
  CHECK(got.finish_reason == "stop");
  CHECK(got.model == "qwen3-coder");
  CHECK(got.prompt_tokens == 1200);
  CHECK(got.completion_tokens == 800);
  CHECK(got.reasoning_tokens == 300);
  CHECK(got.latency_ms == doctest::Approx(1234.5));
  CHECK(got.created_at.size() == 24);
  REQUIRE(views[0].candidate);
  CHECK(views[0].candidate->turn_id == turn_id);
  CHECK(views[0].candidate->ptx == candidate.ptx);
  CHECK(views[0].candidate->manifest == candidate.manifest);
  CHECK(views[0].candidate->format_problem.empty());
  CHECK_FALSE(views[0].evaluation);
}

TEST_CASE("record_turn for a stored (trajectory - round) writes nothing and returns the stored id") {
  temp_folder dir;
  const auto file = dir / "run.db";
  auto store = run_store::open(file);
  const int64_t traj = store->ensure_trajectory(store->create_experiment(sample_experiment("e")), "t", "f", 0);
  const int64_t first = store->record_turn(sample_turn(traj, 0), sample_candidate(100));
  turn_row changed = sample_turn(traj, 0);
  changed.reply = "a different reply";
  candidate_row no_ptx;
  no_ptx.format_problem = "no ```ptx block";
  CHECK(store->record_turn(changed, no_ptx) == first);
  CHECK(sql_count(file, "SELECT count(*) FROM turns") == 1);
  CHECK(sql_count(file, "SELECT count(*) FROM candidates") == 1);
  CHECK(store->turns(traj)[0].turn.reply == sample_turn(traj, 0).reply);

  // A reply without a candidate still gets its candidate row, carrying the problem.
  const int64_t second = store->record_turn(sample_turn(traj, 1), no_ptx);
  CHECK(second != first);
  const auto views = store->turns(traj);
  REQUIRE(views.size() == 2);
  CHECK(views[1].turn.round == 1);
  REQUIRE(views[1].candidate);
  CHECK(views[1].candidate->ptx.empty());
  CHECK(views[1].candidate->format_problem == "no ```ptx block");
}

TEST_CASE("a turn for a trajectory that does not exist is refused - naming the file and the cause") {
  temp_folder dir;
  auto store = run_store::open(dir / "run.db");
  try {
    store->record_turn(sample_turn(42, 0), sample_candidate(10));
    FAIL("a turn without trajectory was written");
  } catch (const store_error& e) {
    CHECK(std::string(e.what()).find("run.db") != std::string::npos);
    CHECK(std::string(e.what()).find("FOREIGN KEY") != std::string::npos);
  }
}
