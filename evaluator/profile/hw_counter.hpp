#pragma once
// Hardware performance counters of launches that are NOT instrumented, through
// CUPTI's range profiler (cupti_range_profiler.h, CUDA 13): the counters the
// GPU keeps anyway (warp instructions per pipe, tensor-pipe instructions by
// kind, TMA instructions and bytes), read around each launch. Unlike the SASS
// metrics pass (sass_counter.hpp), nothing in the kernel's code changes and it
// runs at full speed, so a kernel cannot tell this run from a checked or a
// timed one. Metrics are ncu's names with a rollup ("sm__inst_executed_pipe_tensor_op_gmma.sum").
//
// Replay is the caller's (user replay): a metric set that needs n counter
// passes runs the caller's `run_pass` n times; each pass must put the same
// state back (inputs, poisoned outputs, reset scratch) before its launches.
// Ranges are the caller's (user ranges): `run_pass` wraps each launch in
// marks.push(name) ... marks.pop(), synchronising before the pop.
#include <cuda.h>

#include "evaluator/profile/hw_host.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ptxbench {

struct hw_range_marks {
  std::function<void(const std::string& name)> push;
  std::function<void()> pop;
};

struct hw_count_result {
  bool ok = false;
  std::string error;                       // why nothing was counted (CUPTI's words)
  bool unavailable = false;                // the machine cannot count (unsupported, no privileges): not a candidate's fault
  std::vector<std::string> metrics;        // as asked
  std::vector<std::string> range_names;    // in the order the ranges ran
  std::vector<std::vector<double>> values; // [range][metric]
  int passes = 0;                          // times run_pass ran
  double setup_ms = 0, run_ms = 0, decode_ms = 0;
};

// Runs `run_pass` once per counter pass (at most `max_passes`: a metric set
// needing more is refused before anything runs) with the range profiler on
// `context`, and returns every metric's value per range. `run_pass` may throw;
// the exception propagates after the profiler is disabled. Never returns
// made-up values: ok == false with the reason instead.
// `with_availability` hands CUPTI the context's counter availability image (the
// counters another client holds). Off by default: with it, CUPTI 13.0's
// ConfigAddMetrics crashed the process on an H100 (SIGSEGV in libnvperf_host,
// every metric; ptxbench_profile_probe, docs/gpu-runs.md 2026-12-06); without
// it a counter another client holds fails SetConfig or Start, with CUPTI's words.
hw_count_result count_hardware(CUcontext context, const std::vector<std::string>& metrics, size_t max_ranges,
                               int max_passes, const std::function<void(const hw_range_marks&)>& run_pass,
                               bool with_availability = false);

// Host side only (no GPU, no driver): the counter passes `metrics` need on
// `chip` ("GH100"); -1 with `error` set when a metric is unknown there.

// The profiler's name of the context's chip ("GH100"), "" with `error` set on failure.
std::string hardware_chip(CUcontext context, std::string& error);

}  // namespace ptxbench
