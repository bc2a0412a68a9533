#pragma once
// One job of the worker: load the exact cubin, run the runtime and
// correctness stages, the instrumented executed-instruction pass (separate
// from timing), and the timing. Candidate outcomes are values in the result;
// a cuda_error escaping from here is the worker's own failure.
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench::gpu {

protocol::worker_result run_job(worker_state& w, reference_cache& refs, const protocol::worker_job& job);

}  // namespace ptxbench::gpu
