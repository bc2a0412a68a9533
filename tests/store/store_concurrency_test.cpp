// One store shared by many threads, as the loop shares it between trajectories.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/store/store_test_util.hpp"

using namespace ptxbench;
using namespace ptxbench::store_test;

TEST_CASE("8 threads write through one store: nothing lost - nothing duplicated") {
  temp_folder dir;
  const auto file = dir / "run.db";
  auto store = run_store::open(file);
  const int64_t exp = store->create_experiment(sample_experiment("threads"));
  constexpr int k_threads = 8;
  constexpr int k_rounds = 25;
  std::vector<int64_t> shared_turn_ids(k_threads * k_rounds);
  std::atomic<int> failures{0};

  std::vector<std::thread> threads;
  for (int w = 0; w < k_threads; ++w) {
    threads.emplace_back([&, w] {
      try {
        // Each thread's own trajectory, and all of them racing on one shared trajectory.
        const int64_t own = store->ensure_trajectory(exp, "task_" + std::to_string(w), "f", 0);
        const int64_t shared = store->ensure_trajectory(exp, "shared", "f", 0);
        for (int round = 0; round < k_rounds; ++round) {
          turn_row turn;
          turn.trajectory_id = own;
          turn.round = round;
          turn.reply = "thread " + std::to_string(w) + " round " + std::to_string(round);
          candidate_row candidate;
          candidate.ptx = turn.reply;
          store->record_turn(turn, candidate);
          const auto views = store->turns(own);
          evaluation_row e;
          e.candidate_id = views.at(static_cast<size_t>(round)).candidate->id;
          e.verdict = "compile";
          store->record_evaluation(e);

          turn.trajectory_id = shared;
          shared_turn_ids[static_cast<size_t>(w * k_rounds + round)] = store->record_turn(turn, candidate);
          llm_failure_row f;
          f.trajectory_id = own;
          f.round = round;
          store->record_llm_failure(f);
        }
        store->finish_trajectory(own, "compile", false, k_rounds);
      } catch (const std::exception& e) {
        MESSAGE("writer thread failed: " << e.what());
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(failures == 0);

  CHECK(store->trajectories(exp).size() == k_threads + 1);
  CHECK(sql_count(file, "SELECT count(*) FROM turns") == k_threads * k_rounds + k_rounds);
  CHECK(sql_count(file, "SELECT count(*) FROM candidates") == k_threads * k_rounds + k_rounds);
  CHECK(sql_count(file, "SELECT count(*) FROM evaluations") == k_threads * k_rounds);
  CHECK(store->llm_failures(exp).size() == k_threads * k_rounds);
  // Every thread got the same id for each round of the shared trajectory.
  for (int round = 0; round < k_rounds; ++round)
    for (int w = 1; w < k_threads; ++w)
      CHECK(shared_turn_ids[static_cast<size_t>(w * k_rounds + round)] == shared_turn_ids[static_cast<size_t>(round)]);
  for (const auto& t : store->trajectories(exp)) {
    const auto views = store->turns(t.id);
    REQUIRE(views.size() == k_rounds);
    for (int round = 0; round < k_rounds; ++round) {
      CHECK(views[static_cast<size_t>(round)].turn.round == round);
      CHECK(views[static_cast<size_t>(round)].candidate);
    }
    if (t.task_id != "shared") {
      CHECK(t.status == "done");
      CHECK(views.back().turn.reply == "thread " + t.task_id.substr(5) + " round " + std::to_string(k_rounds - 1));
    }
  }
  CHECK(sql_text(file, "PRAGMA integrity_check") == "ok");
}

TEST_CASE("two writable stores on one file (two processes' worth) wait for each other instead of failing") {
  temp_folder dir;
  const auto file = dir / "run.db";
  auto first = run_store::open(file);
  auto second = run_store::open(file);
  const int64_t exp = first->create_experiment(sample_experiment("two"));
  std::atomic<int> failures{0};
  auto write = [&](run_store& store, const std::string& task) {
    try {
      const int64_t traj = store.ensure_trajectory(exp, task, "f", 0);
      for (int round = 0; round < 100; ++round) {
        turn_row turn;
        turn.trajectory_id = traj;
        turn.round = round;
        store.record_turn(turn, candidate_row{});
      }
    } catch (const std::exception& e) {
      MESSAGE("writer failed: " << e.what());
      ++failures;
    }
  };
  std::thread a(write, std::ref(*first), "a");
  std::thread b(write, std::ref(*second), "b");
  a.join();
  b.join();
  CHECK(failures == 0);
  CHECK(sql_count(file, "SELECT count(*) FROM turns") == 200);
}
