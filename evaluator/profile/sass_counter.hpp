#pragma once
// Executed-instruction counts per SASS PC through CUPTI's SASS metrics
// (smsp__sass_inst_executed), for the instructions stage's dynamic proof.
// This is a separate instrumented pass: it perturbs timing and is never used
// while timing. If CUPTI cannot count on this machine, the caller reports the
// stage as unverified, never as passed.
#include <cuda.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ptxbench {

struct sass_pc_count {
  std::string function;   // kernel name as in the cubin
  uint64_t pc_offset = 0; // byte offset inside the function, comparable with nvdisasm offsets
  uint64_t executed = 0;  // warp-level executions (smsp__sass_inst_executed)
};

struct sass_count_result {
  bool ok = false;
  std::string error;  // why counting failed
  std::vector<sass_pc_count> counts;
  // count_executed_sass_segments only: the records of each flush, in order
  // (one per mark, then what was left at the end).
  std::vector<std::vector<sass_pc_count>> segments;
  // Where the pass spent its time (ms): profiler set-up and Enable, the work,
  // and the flush of the records.
  double setup_ms = 0, work_ms = 0, flush_ms = 0;
};

// Seen with CUPTI 13.0 on the H200 (2026-12-02): only the first instrumented
// pass of a process records instructions, and in it only the first kernel
// launched; later passes record none and come back ok=false. The GPU worker
// therefore runs at most one pass per process, launching one kernel in it.
//
// Runs `work` (which may load the module and must launch the kernels and
// synchronise) with SASS instrumentation enabled on `context`, and returns
// counts per PC for every kernel launched. See the implementation file for
// whether the module must be loaded inside `work`.
// Measured on the H200: `work` must load the module itself (cuModuleLoadData
// inside the callback; unload it afterwards): a module loaded before the call
// is not instrumented. A launched kernel without records was therefore not
// counted, which means "unverified", never "not executed". Instrumented
// functions get a record for every instruction up to their last EXIT (count 0
// for those never executed); the BRA/NOP padding after it has none. Counts
// are warp-level and add up over every launch inside one call.
sass_count_result count_executed_sass(CUcontext context, const std::function<void()>& work);

// The same pass, with `work` given `mark`: each call synchronises the context
// and flushes the records so far into the next entry of `segments`; what is
// left at the end is the last entry. `counts` is every segment's records.
// Measured on the H200 with CUPTI 13.0 (2026-12-04): the first segment holds
// the first launch's exact counts and every later one is empty (nothing is
// recorded after a flush), so the worker still runs one (size, launch) per
// process and does not call `mark`; tests/baselines/test_sass_counter.cpp
// checks that a segment never holds another launch's counts.
sass_count_result count_executed_sass_segments(CUcontext context,
                                               const std::function<void(const std::function<void()>& mark)>& work);


}  // namespace ptxbench
