#pragma once
// What a profiling job of the worker measures, raw, for the supervisor to
// summarise (evaluator/pool/profile_summary.hpp). A profiling job runs on a
// spare worker (a fresh process: CUPTI's profilers are set up once per
// process) at the timed size, after the candidate's verdict. Its part:
//   "counters": the range profiler around each candidate launch and the
//               baseline's run (user ranges, user replay);
//   "sampling": PC sampling (stall reasons per SASS PC) of every candidate
//               launch, from a module loaded while sampling is on.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptxbench::protocol {

struct pc_stalls {
  std::string function;
  uint64_t pc_offset = 0;
  std::map<std::string, uint64_t> samples;  // CUPTI stall reason name -> samples
};

struct profile_raw {
  std::string part;      // "counters" or "sampling"
  bool ran = false;
  std::string error;     // why nothing was measured
  bool unavailable = false;  // the machine cannot profile (permissions, driver, another profiler)
  // counters
  std::vector<std::string> metrics;
  std::vector<std::string> ranges;            // "launch 0 (gemm)", "baseline: cuBLASLt ..."
  std::vector<std::vector<double>> values;    // [range][metric]
  std::vector<int> registers;                 // per candidate launch
  std::vector<int> shared_bytes;              // per candidate launch: static + dynamic
  int passes = 0;
  // sampling
  uint64_t total_samples = 0, dropped_samples = 0;
  std::vector<pc_stalls> pcs;
  double time_ms = 0;
  std::map<std::string, double> phase_ms;
};

// The counters the "counters" part reads (ncu's names), in this order; the
// tests check every one is known on GH100 (hardware_passes).
const std::vector<std::string>& profile_counter_metrics();

nlohmann::json to_json(const profile_raw& p);
profile_raw profile_raw_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a bad shape

}  // namespace ptxbench::protocol
