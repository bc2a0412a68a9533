#pragma once
// The frontier library (evaluator/baselines) as the performance stage times
// it: set up (or bound again, when kept from an earlier evaluation) before
// the worker asks for the GPU, its plan chosen after. Neither throws for the
// library's own failures: they come back as `failed` with a reason, an
// evaluator error; a sticky CUDA error is rethrown (the worker is replaced).
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evaluator/api/task.hpp"
#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"

namespace ptxbench {
class baseline;  // evaluator/baselines/baselines.hpp
}

namespace ptxbench::gpu {

// The frontier library on the timed inputs, writing outputs of its own. It is
// kept by the worker (in `refs`, so a candidate's stray write drops it) per
// task and size, with its chosen plan: later evaluations bind it to their
// buffers instead of building it again (~90 ms of host work per evaluation
// under load, on the H200) and are compared with the same plan.
struct kept_baseline {
  std::shared_ptr<baseline> library;
  std::vector<std::pair<std::string, device_memory>> outputs;
  bool chosen = false;
};

struct baseline_setup {
  std::shared_ptr<kept_baseline> kept;  // the library and its outputs (null when there is none)
  std::string key;                      // where it is kept
  std::function<void()> run;            // empty when there is none
  std::string name;
  std::string missing;                  // why there is none ("" when there is one)
  bool failed = false;                  // the library failed: an evaluator error, not the candidate's
  bool reused = false;                  // kept from an earlier evaluation
};

// Builds the library for the timed size on the candidate's inputs, or binds
// the kept one to this evaluation's buffers.
baseline_setup setup_baseline(worker_state& w, reference_cache& refs, const task& t, size_run& timed);

// Times the library's plans and keeps the fastest: with the GPU ours alone
// (after the go), or a plan timed beside another process's work may be kept.
// A kept baseline keeps the plan it chose.
void choose_baseline(worker_state& w, reference_cache& refs, baseline_setup& s, const std::string& size_name);

}  // namespace ptxbench::gpu
