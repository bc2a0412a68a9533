#pragma once
// The worker's profiling jobs (evaluator/protocol/profile_protocol.hpp): run after
// the candidate's verdict, on a fresh worker process, at the timed size. They
// judge nothing: a candidate launch that fails here is reported as the
// profile's error, never as a verdict.
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench::gpu {

// Runs the job's part ("counters" or "sampling") of `job` (job.cubin is the
// copy compiled with line info). Never throws for a CUPTI or launch failure
// (they are the result's error); cuda_error escapes for a broken context.
protocol::profile_raw run_profile_job(worker_state& w, reference_cache& refs, const protocol::worker_job& job);

}  // namespace ptxbench::gpu
