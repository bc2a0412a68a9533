#pragma once
// The steps of `run_timing` (timing.hpp), as nvbench's measure_cold takes
// them, and the state they share. Only timing*.cpp include this.
//   prepare    timing.cpp        the timing seed's inputs and references, the
//                                baseline set up, room for every sample's check
//   sample     timing.cpp        one round: candidate, then baseline, each on
//                                prepared buffers and a cold L2
//   finished?  timing_rule.cpp   the stopping rule (no CUDA)
//   check      timing_check.cpp  every sample's output, the last in full,
//                                inputs, guards, references, baseline error
//   summarise  timing_rule.cpp   medians, speedup, floor, the stage's verdict
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "evaluator/gpu/device_memory.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/timing.hpp"
#include "evaluator/gpu/timing_baseline.hpp"

namespace ptxbench::gpu {

struct measurement {
  measurement(worker_state& w_, reference_cache& refs_, const protocol::worker_job& job_, size_run& timed_,
              const std::vector<global_section>& globals_)
      : w(w_), refs(refs_), job(job_), timed(timed_), globals(globals_) {}

  worker_state& w;
  reference_cache& refs;
  const protocol::worker_job& job;
  size_run& timed;
  const std::vector<global_section>& globals;

  std::shared_ptr<const reference_set> ref;  // the timing seed's references
  baseline_setup base_lib;                   // base_lib.run is empty once there is no baseline to time
  std::vector<std::string> outputs;          // the task's output tensors, in task order
  device_memory totals;                      // comparison totals: per checked round, per output
  std::vector<uint64_t> inputs_before;       // input checksums before the first round
  int checked = 0;                           // rounds whose output was compared (the warm-up's too)
  int unheld = 0;                            // samples whose hold timed out (performance_report::unheld_samples)
  std::vector<double> candidate, baseline;   // samples (ms), the warm-up's left out

  compare_totals* slot(int round, size_t output) {
    return totals.as<compare_totals>() + size_t(round) * outputs.size() + output;
  }
};

// Check: every round's comparison totals, then the last round's output in
// full; inputs, guards and the cached references unchanged; the baseline's
// own error on these inputs. Fills out.correctness_failure, timed_checks,
// samples_checked/_wrong and the report's rechecked flags and baseline errors.
void check_timed_runs(measurement& m, timing_outcome& out);

}  // namespace ptxbench::gpu
