// Test-only writer for the crash test: records turns, candidates and
// evaluations for many trajectories, the way the loop does, until killed.
//   store_writer <database> fresh|resume <trajectories> <rounds>
// fresh creates the experiment (failing if it exists); resume continues from
// what is stored: evaluates stored candidates that have no evaluation, then
// records the remaining rounds. Re-recording the last stored round on purpose
// checks that record_turn returns the stored turn instead of writing another.
// Prints "ready" once the database is open, then one line per trajectory.
// Exit codes: 0 finished, 2 usage, 3 store_error, 4 the store broke a promise.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/store/writer_workload.hpp"

namespace {

using namespace ptxbench;
using namespace ptxbench::store_test;

int64_t open_experiment(run_store& store, bool resume) {
  if (resume) {
    if (auto existing = store.find_experiment(k_crash_experiment)) return existing->id;
  }
  experiment_row e;
  e.name = k_crash_experiment;
  e.config = {{"workload", "crash"}};
  return store.create_experiment(e);
}

// The candidate id of a stored round, as the loop finds it.
int64_t candidate_of(run_store& store, int64_t trajectory_id, int round) {
  for (const auto& view : store.turns(trajectory_id))
    if (view.turn.round == round && view.candidate) return view.candidate->id;
  std::fprintf(stderr, "round %d of trajectory %lld has no candidate\n", round,
               static_cast<long long>(trajectory_id));
  std::exit(4);
}

void write_trajectory(run_store& store, int64_t experiment_id, int trajectory, int rounds) {
  const int64_t id = store.ensure_trajectory(experiment_id, task_name(trajectory), "elementwise", 0);
  if (store.trajectory(id)->status == "done") return;
  const std::vector<turn_view> stored = store.turns(id);
  for (const auto& view : stored)
    if (view.candidate && !view.evaluation)
      store.record_evaluation(workload_evaluation(view.candidate->id, view.turn.round, rounds));
  const int first = stored.empty() ? 0 : static_cast<int>(stored.size()) - 1;
  for (int round = first; round < rounds; ++round) {
    const int64_t turn_id = store.record_turn(workload_turn(id, trajectory, round), workload_candidate(trajectory, round));
    if (round < static_cast<int>(stored.size())) {
      if (turn_id != stored[static_cast<size_t>(round)].turn.id) {
        std::fprintf(stderr, "record_turn wrote round %d of %s again\n", round, task_name(trajectory).c_str());
        std::exit(4);
      }
      continue;  // stored already, and evaluated above
    }
    store.record_evaluation(workload_evaluation(candidate_of(store, id, round), round, rounds));
  }
  store.finish_trajectory(id, "passed", true, rounds);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 || (std::string(argv[2]) != "fresh" && std::string(argv[2]) != "resume")) {
    std::fprintf(stderr, "usage: %s <database> fresh|resume <trajectories> <rounds>\n", argv[0]);
    return 2;
  }
  const bool resume = std::string(argv[2]) == "resume";
  const int trajectories = std::atoi(argv[3]);
  const int rounds = std::atoi(argv[4]);
  try {
    auto store = run_store::open(argv[1]);
    const int64_t experiment_id = open_experiment(*store, resume);
    std::printf("ready\n");
    std::fflush(stdout);
    for (int t = 0; t < trajectories; ++t) {
      write_trajectory(*store, experiment_id, t, rounds);
      std::printf("trajectory %d done\n", t);
      std::fflush(stdout);
    }
    store->set_experiment_status(experiment_id, "done");
  } catch (const store_error& e) {
    std::fprintf(stderr, "store error: %s\n", e.what());
    return 3;
  }
  return 0;
}
