#pragma once
// The worker's half of the hardware cross-check (evaluator/pool/hw_cross_check.hpp):
// every launch at the job's size on inputs of the counting seed, once, then
// again (the same inputs, outputs poisoned, scratch reset, globals restored:
// as a timed sample after the warm-up) under CUPTI's range profiler, one range
// per launch, nothing in the kernel's code changed; the outputs are checked
// after. A failure of the candidate's launch is `candidate_failure` (the
// supervisor retries once); a profiler the machine cannot run is
// `hw_unavailable`, never the candidate's.
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench::gpu {

protocol::dynamic_counts hw_pass(worker_state& w, reference_cache& refs, const protocol::worker_job& job);

}  // namespace ptxbench::gpu
