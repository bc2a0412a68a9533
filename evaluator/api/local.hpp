#pragma once
// Factory for the evaluator that runs on this host: compile and static checks
// in-process, GPU stages in isolated worker processes (one per visible GPU).
#include <memory>
#include <string>

#include "evaluation.hpp"

namespace ptxbench {

struct local_evaluator_options {
  // "auto": start workers if a GPU is visible; "off": never (GPU stages not_run).
  std::string gpu_mode = "auto";
  std::string worker_path;  // ptxbench-worker executable; empty = next to the running binary
  int max_gpus = 0;         // 0 = all visible
  // Spare workers kept ready per GPU for the executed-instruction passes;
  // -1 = $PTXBENCH_SPARE_WORKERS (0-16), else 6.
  int spare_workers = -1;
  // Counting passes beside the main job when the GPU is otherwise idle
  // (nobody waiting, a spare ready for each pass): lower latency, at the cost
  // of the passes of a candidate that then fails correctness. -1 =
  // $PTXBENCH_SPECULATIVE_COUNTING (0 or 1), else on.
  int speculative_counting = -1;
  // Main workers per GPU (checked and timed runs): with two, one candidate's
  // checked runs go on while another's timing waits for the GPU. The extra
  // ones start only when jobs overlap. -1 = $PTXBENCH_MAIN_WORKERS (1-8), else
  // 2: on the H200 under load (64 trajectories in flight), with spares making
  // their contexts with one connection, two main workers and six spares judged
  // 138 candidates per minute against 117 with one main worker, the same
  // speedups (docs/gpu-runs.md, 2026-12-04).
  int main_workers = -1;
  // CUDA_DEVICE_MAX_CONNECTIONS of the spare workers (a counting pass uses one
  // stream). The driver makes contexts one at a time, and a context with one
  // connection took 55 ms instead of 100-115 (4 at once: 145 ms each instead
  // of 400) on the H200 (docs/gpu-runs.md, 2026-12-04), time a spare holds
  // the GPU against timing. -1 = $PTXBENCH_SPARE_CONNECTIONS (0 = the
  // environment's own, 1-32), else 1. Main workers keep the environment's.
  int spare_connections = -1;
  // The hardware cross-check of the instructions stage (evaluator/pool/hw_cross_check.hpp):
  // one more spare job per candidate at the timed size, under CUPTI's range
  // profiler; where it runs, a machine that cannot profile leaves the stage
  // unverified. 0 = off; 1 = every candidate (40% of throughput when every
  // candidate passes: docs/gpu-runs.md, 2026-12-07 18:45); 2 = the candidates
  // whose PTX reads a clock, timer or performance monitor (ptx_timer_read_of:
  // the kernels that can tell a counted run from one that is not).
  // -1 = $PTXBENCH_HW_CHECK ("0", "1" or "timers"), else 2.
  int hw_check = -1;
};

// Never throws for a missing GPU or driver: such an evaluator reports the GPU
// stages as not run, with the reason. Throws for broken installs (nvJitLink missing).
std::unique_ptr<evaluator> make_local_evaluator(const local_evaluator_options& options);

}  // namespace ptxbench
