// Merging shard databases: every row arrives once, merging again adds nothing,
// a pending trajectory is completed later, and overlaps or conflicting configs
// are refused before anything is written.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "agent/store/merge.hpp"
#include "tests/store/store_test_util.hpp"

using namespace ptxbench;
using namespace ptxbench::store_test;

namespace {

const std::vector<std::string> grid_tasks{"vector_add", "softmax", "gemm_bf16"};
constexpr int grid_samples = 2;
constexpr int shard_count = 3;

experiment_row shard_experiment(int shard_index) {
  experiment_row e = sample_experiment("sweep");
  e.config["shard_index"] = shard_index;
  e.config["shard_count"] = shard_count;
  // What differs between the nodes of an array job without making the shards disagree.
  const std::string node = "node-" + std::to_string(shard_index);
  e.config["db"] = "runs/shard-" + std::to_string(shard_index) + ".db";
  e.config["llm"] = {{"model", "m"}, {"base_url", "http://" + node + ":8000/v1"}};
  e.provider = "openai http://" + node + ":8000/v1";
  e.host = node;
  e.created_at = "2026-12-02T08:0" + std::to_string(shard_index) + ":00.000Z";
  return e;
}

std::string stamp(int round) { return "2026-12-02T09:1" + std::to_string(round) + ":00.000Z"; }

// Round `round` of a trajectory: round 0 fails to compile, later rounds pass.
void write_round(run_store& store, int64_t trajectory, const std::string& task, int sample, int round,
                 const std::string& reply_suffix = "") {
  turn_row turn;
  turn.trajectory_id = trajectory;
  turn.round = round;
  turn.messages = {{{"role", "user"}, {"content", "write " + task}}};
  turn.feedback = round == 0 ? "" : "compile failed";
  turn.feedback_detail = "full";
  turn.reply = "```ptx\n// " + task + " " + std::to_string(sample) + " r" + std::to_string(round) + "\n```" +
               reply_suffix;
  turn.model = "m";
  turn.prompt_tokens = 100 + round;
  turn.completion_tokens = 50;
  turn.latency_ms = 12.5;
  turn.created_at = stamp(round);
  candidate_row candidate;
  candidate.ptx = ".visible .entry " + task + "_" + std::to_string(sample) + "_" + std::to_string(round);
  candidate.manifest = "{}";
  store.record_turn(turn, candidate);
  evaluation_row e;
  e.candidate_id = store.turns(trajectory).at(static_cast<size_t>(round)).candidate->id;
  e.evaluator_version = "0.1.0";
  e.gpu = "NVIDIA H200";
  e.verdict = round == 0 ? "compile" : "passed";
  e.passed = round > 0;
  e.correct = e.passed;
  e.instructions_ok = e.passed;
  if (e.passed) e.speedup = 1.25 + sample;
  e.result = {{"verdict", e.verdict}, {"task", task}, {"stages", {{"compile", round == 0 ? "error" : "ok"}}}};
  e.created_at = stamp(round);
  store.record_evaluation(e);
}

void write_failure(run_store& store, int64_t trajectory) {
  llm_failure_row f;
  f.trajectory_id = trajectory;
  f.round = 1;
  f.attempt = 0;
  f.http_status = 429;
  f.cause = "rate limited";
  f.elapsed_ms = 3.0;
  f.created_at = stamp(1);
  store.record_llm_failure(f);
}

// Shard `index` of the 3 x 2 grid: trajectory j belongs to shard j % 3. Each
// trajectory has two rounds (compile failure, then a pass) and one LLM failure.
void write_shard(const std::filesystem::path& file, int index) {
  auto store = run_store::open(file);
  const int64_t experiment = store->create_experiment(shard_experiment(index));
  for (int j = 0; j < static_cast<int>(grid_tasks.size()) * grid_samples; ++j) {
    if (j % shard_count != index) continue;
    const std::string& task = grid_tasks[static_cast<size_t>(j / grid_samples)];
    const int sample = j % grid_samples;
    const int64_t t = store->ensure_trajectory(experiment, task, "elementwise", sample);
    write_round(*store, t, task, sample, 0);
    write_failure(*store, t);
    write_round(*store, t, task, sample, 1);
    store->finish_trajectory(t, "passed", true, 2);
  }
  store->set_experiment_status(experiment, "done");
}

std::vector<std::filesystem::path> write_shards(const temp_folder& dir) {
  std::vector<std::filesystem::path> files;
  for (int i = 0; i < shard_count; ++i) {
    files.push_back(dir / ("shard-" + std::to_string(i) + ".db"));
    write_shard(files.back(), i);
  }
  return files;
}

long long rows(const std::filesystem::path& file, const std::string& table) {
  return sql_count(file, "SELECT count(*) FROM " + table);
}

}  // namespace

TEST_CASE("merge: three shards become one experiment holding every row once") {
  temp_folder dir;
  const auto shards = write_shards(dir);
  const auto merged = dir / "all.db";
  auto out = run_store::open(merged);
  const merge_result r = merge_run_databases(shards, *out);

  CHECK(r.inputs == 3);
  REQUIRE(r.experiments.size() == 1);
  const merged_experiment& e = r.experiments[0];
  CHECK(e.name == "sweep");
  CHECK(e.created);
  CHECK(e.databases == 3);
  CHECK(e.status == "done");
  CHECK(e.trajectories_copied == 6);
  CHECK(e.trajectories_skipped == 0);
  CHECK(r.total_trajectories() == 6);
  CHECK(r.total_turns() == 12);
  CHECK(r.total_evaluations() == 12);
  CHECK(r.total_llm_failures() == 6);
  CHECK(r.warnings.empty());
  CHECK(rows(merged, "experiments") == 1);
  CHECK(rows(merged, "trajectories") == 6);
  CHECK(rows(merged, "turns") == 12);
  CHECK(rows(merged, "candidates") == 12);
  CHECK(rows(merged, "evaluations") == 12);
  CHECK(rows(merged, "llm_failures") == 6);

  const auto x = out->find_experiment("sweep");
  REQUIRE(x);
  CHECK(x->status == "done");
  CHECK_FALSE(x->finished_at.empty());
  CHECK(x->created_at == "2026-12-02T08:00:00.000Z");
  CHECK(x->host == "node-0, node-1, node-2");
  CHECK(x->provider.find("node-2") != std::string::npos);
  CHECK(x->config["llm"]["model"] == "m");
  CHECK_FALSE(x->config.contains("shard_index"));
  CHECK_FALSE(x->config.contains("shard_count"));
  CHECK(x->config["rounds"] == 3);
  CHECK(x->config["db"] == merged.string());
  CHECK(x->config["merged_from_shards"]["databases"] ==
        nlohmann::json{shards[0].string(), shards[1].string(), shards[2].string()});
  CHECK(x->config["merged_from_shards"]["shards"] == nlohmann::json{"0/3", "1/3", "2/3"});

  // Every trajectory's content equals its shard's, with ids remapped.
  for (size_t s = 0; s < shards.size(); ++s) {
    auto in = run_store::open(shards[s], true);
    const int64_t in_experiment = in->find_experiment("sweep")->id;
    for (const auto& t : in->trajectories(in_experiment)) {
      CAPTURE(t.task_id);
      CAPTURE(t.sample);
      const auto all = out->trajectories(x->id);
      const auto m = std::find_if(all.begin(), all.end(), [&](const trajectory_row& o) {
        return o.task_id == t.task_id && o.sample == t.sample;
      });
      REQUIRE(m != all.end());
      CHECK(m->status == "done");
      CHECK(m->passed);
      CHECK(m->final_verdict == "passed");
      CHECK(m->rounds_done == 2);
      CHECK(m->family == "elementwise");
      const auto a = in->turns(t.id);
      const auto b = out->turns(m->id);
      REQUIRE(a.size() == b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        CHECK(b[i].turn.reply == a[i].turn.reply);
        CHECK(b[i].turn.messages == a[i].turn.messages);
        CHECK(b[i].turn.created_at == a[i].turn.created_at);
        CHECK(b[i].turn.prompt_tokens == a[i].turn.prompt_tokens);
        CHECK(b[i].candidate->ptx == a[i].candidate->ptx);
        REQUIRE(b[i].evaluation);
        CHECK(b[i].evaluation->candidate_id == b[i].candidate->id);
        CHECK(b[i].evaluation->verdict == a[i].evaluation->verdict);
        CHECK(b[i].evaluation->speedup == a[i].evaluation->speedup);
        CHECK(b[i].evaluation->result == a[i].evaluation->result);
      }
    }
  }
  for (const auto& f : out->llm_failures(x->id)) {
    CHECK(f.http_status == 429);
    CHECK(f.round == 1);
    CHECK(out->trajectory(f.trajectory_id)->experiment_id == x->id);
  }
}

TEST_CASE("merge: merging again - or an input listed twice - adds nothing") {
  temp_folder dir;
  const auto shards = write_shards(dir);
  const auto merged = dir / "all.db";
  auto out = run_store::open(merged);
  merge_run_databases(shards, *out);

  std::vector<std::filesystem::path> again = shards;
  again.push_back(shards[1]);
  const merge_result r = merge_run_databases(again, *out);
  REQUIRE(r.experiments.size() == 1);
  CHECK_FALSE(r.experiments[0].created);
  CHECK(r.experiments[0].trajectories_skipped == 8);  // 6 in the output, 2 duplicates of shard 1
  CHECK(r.total_trajectories() == 0);
  CHECK(r.total_turns() == 0);
  CHECK(r.total_evaluations() == 0);
  CHECK(r.total_llm_failures() == 0);
  CHECK(rows(merged, "experiments") == 1);
  CHECK(rows(merged, "trajectories") == 6);
  CHECK(rows(merged, "turns") == 12);
  CHECK(rows(merged, "evaluations") == 12);
  CHECK(rows(merged, "llm_failures") == 6);
}

TEST_CASE("merge: a running shard keeps the experiment running - and a later merge completes it") {
  temp_folder dir;
  const auto shard0 = dir / "shard-0.db";
  const auto shard1 = dir / "shard-1.db";
  write_shard(shard0, 0);
  int64_t pending = 0;
  {
    // Shard 1 is still at work: one trajectory has round 0 only, not evaluated yet.
    auto store = run_store::open(shard1);
    const int64_t experiment = store->create_experiment(shard_experiment(1));
    pending = store->ensure_trajectory(experiment, "vector_add", "elementwise", 1);
    turn_row turn;
    turn.trajectory_id = pending;
    turn.created_at = stamp(0);
    store->record_turn(turn, candidate_row{});
  }
  const auto merged = dir / "all.db";
  auto out = run_store::open(merged);
  merge_result r = merge_run_databases({shard0, shard1}, *out);
  REQUIRE(r.experiments.size() == 1);
  CHECK(r.experiments[0].status == "running");
  CHECK(out->find_experiment("sweep")->status == "running");
  CHECK(out->find_experiment("sweep")->finished_at.empty());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("2/3") != std::string::npos);
  CHECK(rows(merged, "trajectories") == 3);
  CHECK(rows(merged, "turns") == 5);

  {
    // Shard 1 evaluates round 0, writes round 1, finishes; shard 2 arrives.
    auto store = run_store::open(shard1);
    evaluation_row e;
    e.candidate_id = store->turns(pending).at(0).candidate->id;
    e.verdict = "compile";
    e.result = {{"verdict", "compile"}};
    e.created_at = stamp(0);
    store->record_evaluation(e);
    write_round(*store, pending, "vector_add", 1, 1);
    store->finish_trajectory(pending, "passed", true, 2);
    store->set_experiment_status(store->find_experiment("sweep")->id, "done");
  }
  const auto shard2 = dir / "shard-2.db";
  write_shard(shard2, 2);
  r = merge_run_databases({shard0, shard1, shard2}, *out);
  REQUIRE(r.experiments.size() == 1);
  const merged_experiment& e = r.experiments[0];
  CHECK(e.trajectories_completed == 1);
  CHECK(e.trajectories_copied == 2);
  CHECK(e.trajectories_skipped == 2);
  CHECK(e.turns == 1 + 4);
  CHECK(e.evaluations == 2 + 4);
  CHECK(e.status == "done");
  CHECK(r.warnings.empty());
  const auto x = out->find_experiment("sweep");
  CHECK(x->status == "done");
  CHECK_FALSE(x->finished_at.empty());
  for (const auto& t : out->trajectories(x->id)) {
    CAPTURE(t.task_id);
    CHECK(t.status == "done");
    CHECK(out->turns(t.id).size() == 2);
    for (const auto& v : out->turns(t.id)) CHECK(v.evaluation);
  }
}

TEST_CASE("merge: overlapping shards with different content are refused before any write") {
  temp_folder dir;
  const auto a = dir / "a.db";
  const auto b = dir / "b.db";
  for (const auto& file : {a, b}) {
    auto store = run_store::open(file);
    const int64_t experiment = store->create_experiment(shard_experiment(file == a ? 0 : 1));
    const int64_t t = store->ensure_trajectory(experiment, "gemm_bf16", "gemm", 1);
    write_round(*store, t, "gemm_bf16", 1, 0, file == a ? "" : " (a different reply)");
  }
  const auto merged = dir / "all.db";
  auto out = run_store::open(merged);
  try {
    merge_run_databases({a, b}, *out);
    FAIL("an overlap was merged");
  } catch (const merge_error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("gemm_bf16 sample 1") != std::string::npos);
    CHECK(what.find(a.string()) != std::string::npos);
    CHECK(what.find(b.string()) != std::string::npos);
    CHECK(what.find("reply") != std::string::npos);
  }
  CHECK(rows(merged, "experiments") == 0);
  CHECK(rows(merged, "turns") == 0);

  // The same trajectory with identical content in two shards is merged once.
  const merge_result r = merge_run_databases({a, a}, *out);
  CHECK(r.experiments.at(0).trajectories_copied == 1);
  CHECK(r.experiments.at(0).trajectories_skipped == 1);
  CHECK(rows(merged, "turns") == 1);
  // And a shard that disagrees with what the output already holds is refused.
  CHECK_THROWS_AS(merge_run_databases({b}, *out), merge_error);
  CHECK(rows(merged, "turns") == 1);
}

TEST_CASE("merge: configs that differ beyond the shard fields are refused - naming the key and files") {
  temp_folder dir;
  const auto a = dir / "a.db";
  const auto b = dir / "b.db";
  write_shard(a, 0);
  {
    auto store = run_store::open(b);
    experiment_row e = shard_experiment(1);
    e.config["rounds"] = 5;
    store->create_experiment(e);
  }
  const auto merged = dir / "all.db";
  auto out = run_store::open(merged);
  try {
    merge_run_databases({a, b}, *out);
    FAIL("conflicting configs were merged");
  } catch (const merge_error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("/rounds") != std::string::npos);
    CHECK(what.find("(3)") != std::string::npos);
    CHECK(what.find("(5)") != std::string::npos);
    CHECK(what.find(a.string()) != std::string::npos);
    CHECK(what.find(b.string()) != std::string::npos);
  }
  CHECK(rows(merged, "experiments") == 0);

  // Only the named experiments are merged when a selection is given.
  const merge_result r = merge_run_databases({a}, *out, merge_options{{"other"}});
  CHECK(r.experiments.empty());
  CHECK(rows(merged, "experiments") == 0);
}

TEST_CASE("merge: a missing input - a file that is no database - or the output as input are bad input") {
  temp_folder dir;
  const auto shard = dir / "shard-0.db";
  write_shard(shard, 0);
  const auto merged = dir / "all.db";
  auto out = run_store::open(merged);
  CHECK_THROWS_WITH_AS(merge_run_databases({shard, dir / "absent.db"}, *out),
                       doctest::Contains("absent.db': no such file"), merge_error);
  CHECK_THROWS_WITH_AS(merge_run_databases({merged}, *out), doctest::Contains("is the output database"),
                       merge_error);
  const auto text = dir / "notes.db";
  {
    std::ofstream(text) << "not a database\n";
  }
  CHECK_THROWS_AS(merge_run_databases({text}, *out), merge_error);
  CHECK(rows(merged, "experiments") == 0);
}

namespace {

// A shard whose one trajectory has a branched round 1 (two siblings, branch 1
// chosen). `partial`: the shard was copied while its round 1 was running:
// branch 0 judged, branch 1 stored without a verdict, nothing chosen.
void write_branched_shard(const std::filesystem::path& file, bool partial) {
  auto store = run_store::open(file);
  experiment_row e = sample_experiment("branched");
  e.config["branch"] = 2;
  const int64_t experiment = store->create_experiment(e);
  const int64_t t = store->ensure_trajectory(experiment, "softmax", "reduction", 0);
  write_round(*store, t, "softmax", 0, 0);
  for (int b = 0; b < 2; ++b) {
    branch_reply_row s;
    s.branch = b;
    s.turn.trajectory_id = t;
    s.turn.round = 1;
    s.turn.messages = {{{"role", "user"}, {"content", "write softmax"}}};
    s.turn.reply = "sibling " + std::to_string(b);
    s.turn.model = "m";
    s.turn.created_at = stamp(1);
    s.candidate.ptx = ".visible .entry softmax_b" + std::to_string(b);
    if (!partial || b == 0) {
      evaluation_row v;
      v.evaluator_version = "0.1.0";
      v.verdict = b == 0 ? "compile" : "passed";
      v.passed = b == 1;
      v.result = {{"verdict", v.verdict}};
      v.created_at = stamp(1);
      s.evaluation = v;
    }
    store->record_branch_reply(s);
  }
  if (partial) return;
  store->choose_branch(t, 1, 1);
  store->finish_trajectory(t, "passed", true, 2);
  store->set_experiment_status(experiment, "done");
}

}  // namespace

TEST_CASE("merge copies the siblings of branched rounds - completes a partly recorded round - adds nothing twice") {
  temp_folder dir;
  const auto merged = dir / "all.db";
  const auto partial = dir / "partial.db";
  const auto full = dir / "full.db";
  write_branched_shard(partial, true);
  write_branched_shard(full, false);
  auto out = run_store::open(merged);
  auto first = merge_run_databases({partial}, *out);
  CHECK(first.total_branch_replies() == 2);
  auto exp = out->find_experiment("branched");
  REQUIRE(exp);
  auto t = out->trajectories(exp->id).at(0);
  CHECK(t.status == "pending");
  auto siblings = out->branch_replies(t.id);
  REQUIRE(siblings.size() == 2);
  CHECK(siblings[0].evaluation);
  CHECK_FALSE(siblings[1].evaluation);
  // The finished copy: branch 1's verdict and the choice are filled in, no sibling twice.
  auto second = merge_run_databases({full}, *out);
  CHECK(second.experiments.at(0).trajectories_completed == 1);
  CHECK(second.total_branch_replies() == 1);
  siblings = out->branch_replies(out->trajectories(exp->id).at(0).id);
  REQUIRE(siblings.size() == 2);
  REQUIRE(siblings[1].evaluation);
  CHECK(siblings[1].evaluation->verdict == "passed");
  CHECK(siblings[1].chosen);
  CHECK_FALSE(siblings[0].chosen);
  CHECK(siblings[1].turn.created_at == stamp(1));
  auto turns = out->turns(out->trajectories(exp->id).at(0).id);
  REQUIRE(turns.size() == 2);
  CHECK(turns[1].turn.reply == "sibling 1");
  CHECK(rows(merged, "branch_replies") == 2);
  // Merging again adds nothing.
  auto third = merge_run_databases({full}, *out);
  CHECK(third.total_branch_replies() == 0);
  CHECK(third.experiments.at(0).trajectories_skipped == 1);
  CHECK(rows(merged, "branch_replies") == 2);
}

TEST_CASE("merge refuses two shards whose siblings of one round differ") {
  temp_folder dir;
  const auto a = dir / "a.db";
  const auto b = dir / "b.db";
  write_branched_shard(a, false);
  write_branched_shard(b, false);
  {
    auto store = run_store::open(b);
    const auto t = store->trajectories(store->find_experiment("branched")->id).at(0);
    branch_reply_row extra = store->branch_replies(t.id).at(0);
    extra.branch = 2;
    store->record_branch_reply(extra);
  }
  auto out = run_store::open(dir / "all.db");
  CHECK_THROWS_WITH_AS(merge_run_databases({a, b}, *out), doctest::Contains("round 1 branch 2"), merge_error);
  CHECK(rows(dir / "all.db", "branch_replies") == 0);
}
