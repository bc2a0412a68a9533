#pragma once
// The profile of a candidate that reached the performance stage: where its
// time went, measured after the verdict (never part of it), at the timed size.
// Kernel figures come from the GPU's counters (ncu's metric names, CUPTI's
// range profiler), for the candidate's launches and the library baseline's
// side by side; stall reasons come from PC sampling, added up on the lines of
// the candidate's own PTX; the roofline line places the candidate against the
// device's peaks. A part that could not be measured says why in plain words
// (`*_error`) and has no figures: nothing here is ever made up.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptxbench {

// One range of the counter pass: a candidate launch, or the baseline's run
// (all its library kernels together). -1: not measured.
struct profile_kernel {
  std::string name;                  // "yours: launch 0 (gemm)", "cuBLASLt"
  bool baseline = false;
  double duration_us = -1;           // gpu__time_duration.sum
  double sm_throughput_pct = -1;     // sm__throughput, % of peak
  double tensor_pipe_pct = -1;       // tensor pipe (wgmma/mma) cycles active, % of peak
  double dram_throughput_pct = -1;   // dram__throughput, % of peak
  double l2_throughput_pct = -1;     // lts__throughput, % of peak
  double l2_hit_rate_pct = -1;       // lts__t_sector_hit_rate
  double achieved_occupancy_pct = -1;  // sm__warps_active, % of peak sustained
  double smem_bank_conflicts = -1;   // l1tex shared-memory bank conflicts (count)
  double dram_bytes = -1;            // dram__bytes.sum
  int registers_per_thread = -1;     // the function's (candidate only)
  int shared_bytes_per_cta = -1;     // static + dynamic (candidate only)
};

// One line of the candidate's PTX with PC samples on it.
struct profile_line {
  int line = 0;                // 1-based, in the PTX the model wrote
  std::string text;            // the line, trimmed and cut to 160 characters
  double share = 0;            // of all samples of the candidate's kernels
  uint64_t samples = 0;
  std::string stall;           // dominant stall reason, CUPTI's name ("barrier", "long_scoreboard")
  std::string stall_words;     // the same in plain words ("waiting on a barrier")
  double stall_share = 0;      // of this line's samples
  // Of `samples`, those charged here from other lines' waits: the consumers'
  // waits on mbarriers this code's TMA loads fill (blame through the barrier),
  // and those lines.
  uint64_t blamed = 0;
  std::vector<int> blamed_from;
};

struct profile_roofline {
  double flops = 0;            // the task's FLOPs at the timed size
  double bytes = 0;            // the task's minimum bytes (inputs read + outputs written once)
  double intensity = 0;        // flops / bytes
  double achieved_tflops = 0;  // flops / the candidate's time
  double peak_tflops = 0;      // measured on this worker
  double achieved_gbps = 0;    // bytes / the candidate's time (the minimum traffic)
  double dram_gbps = 0;        // measured DRAM traffic / the candidate's kernel time, when counted
  double peak_gbps = 0;        // measured copy bandwidth of this worker
  std::string bound;           // "compute" or "memory": which roof the intensity puts it under
};

struct profile_report {
  bool ran = false;                  // some part measured something
  std::string size;                  // the timed size
  std::string fingerprint;           // what the profile is cached by
  bool cached = false;               // reused from an earlier evaluation of the same candidate
  std::vector<profile_kernel> kernels;
  std::string kernels_error;         // why there are no kernel figures
  std::vector<profile_line> lines;   // hottest first (at most 20)
  uint64_t samples = 0;              // PC samples of the candidate's kernels
  double unmapped_share = 0;         // samples on SASS with no line of the candidate (prologue, padding)
  // Samples waiting on local-memory loads (registers spilled by ptxas, .local
  // arrays), of all, and over how many lines: spills spread over many lines,
  // none of which need be the hottest.
  double local_wait_share = 0;
  int local_wait_lines = 0;
  // The lines with the most samples waiting on local memory, most first (at
  // most 5): share and samples count those waits only.
  std::vector<profile_line> local_wait_top;
  std::string lines_error;           // why there are no lines
  profile_roofline roofline;
  double time_ms = 0;                // wall time of the profile, all parts
  // Where the time went, in ms: "line_info_compile" (the copy with .loc lines,
  // overlapping the counters), "counters" and "sampling" (each part's wall
  // time on its spare, waits for the GPU included), and the worker's own
  // phases ("worker_counters", "worker_sampling_setup", "worker_sampling_work",
  // "worker_sampling_collect").
  std::map<std::string, double> phase_ms;
};

// Whether the feedback leads with local memory rather than with the hottest
// line: spills spread their waits over many lines (one per spilled register
// write), so together they can outweigh the hottest single line while none
// of them is it.
inline bool leads_with_local_memory(const profile_report& p) {
  return p.local_wait_share >= 0.05 && !p.local_wait_top.empty() &&
         (p.lines.empty() || p.local_wait_share > p.lines.front().share);
}

// The waits on local memory in words, for feedback and the viewer alike:
// "45% of samples wait on local-memory loads, over 128 lines (registers
// spilled by ptxas, or .local arrays)". Empty under 5% (or not a number).
inline std::string local_memory_words(const profile_report& p) {
  if (!(p.local_wait_share >= 0.05)) return "";
  char b[200];
  std::snprintf(b, sizeof b,
                "%.0f%% of samples wait on local-memory loads, over %d lines (registers spilled by ptxas, or .local "
                "arrays)",
                100.0 * p.local_wait_share, p.local_wait_lines);
  return b;
}

// A line's samples charged from consumers' waits, in words: "; 80% of them
// are the waits at lines 165, 292 for the mbarriers this code's TMA loads
// fill (charged to the code they wait for)". Empty when none.
inline std::string blame_words(const profile_line& l) {
  if (l.blamed == 0 || l.samples == 0 || l.blamed_from.empty()) return "";
  std::string lines;
  for (size_t i = 0; i < l.blamed_from.size() && i < 4; ++i)
    lines += (i ? ", " : "") + std::to_string(l.blamed_from[i]);
  if (l.blamed_from.size() > 4) lines += ", ...";
  char b[300];
  std::snprintf(b, sizeof b,
                "; %.0f%% of them are the waits at line%s %s for the mbarriers this code's TMA loads fill (charged to "
                "the code they wait for)",
                100.0 * double(l.blamed) / double(l.samples), l.blamed_from.size() > 1 ? "s" : "", lines.c_str());
  return b;
}

// The roofline in words, for feedback and the viewer alike: "arithmetic
// intensity ... (compute-bound on this GPU); <who> <reach> N TFLOP/s of ...".
// Empty when the roofline was not measured.
inline std::string roofline_words(const profile_roofline& r, const char* who_reaches) {
  if (!(r.flops > 0 && r.achieved_tflops > 0)) return "";
  char b[400];
  std::snprintf(b, sizeof b,
                "arithmetic intensity %.0f FLOP/byte (%s-bound on this GPU); %s %.0f TFLOP/s of %.0f peak (%.0f%%) "
                "and %.0f GB/s of the minimum traffic against %.0f GB/s of bandwidth",
                r.intensity, r.bound.empty() ? "?" : r.bound.c_str(), who_reaches, r.achieved_tflops, r.peak_tflops,
                r.peak_tflops > 0 ? 100.0 * r.achieved_tflops / r.peak_tflops : 0.0, r.achieved_gbps, r.peak_gbps);
  return b;
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(profile_kernel, name, baseline, duration_us, sm_throughput_pct,
                                                tensor_pipe_pct, dram_throughput_pct, l2_throughput_pct,
                                                l2_hit_rate_pct, achieved_occupancy_pct, smem_bank_conflicts,
                                                dram_bytes, registers_per_thread, shared_bytes_per_cta)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(profile_line, line, text, share, samples, stall, stall_words,
                                                stall_share, blamed, blamed_from)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(profile_roofline, flops, bytes, intensity, achieved_tflops,
                                                peak_tflops, achieved_gbps, dram_gbps, peak_gbps, bound)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(profile_report, ran, size, fingerprint, cached, kernels,
                                                kernels_error, lines, samples, unmapped_share, local_wait_share,
                                                local_wait_lines, local_wait_top, lines_error, roofline, time_ms, phase_ms)

}  // namespace ptxbench
