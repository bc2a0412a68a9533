#pragma once
// From a profiling job's raw measurements (profile_protocol.hpp) to the
// profile_report of the evaluation: kernel figures by name, PC samples added
// up on the candidate's PTX lines, the dominant stall in plain words, and the
// roofline line. Pure: no GPU, no processes.
#include <string>
#include <vector>

#include "evaluator/api/profile.hpp"
#include "evaluator/api/task.hpp"
#include "evaluator/compile/line_info.hpp"
#include "evaluator/protocol/profile_protocol.hpp"

namespace ptxbench {

// CUPTI's stall reason name ("smsp__pcsamp_warps_issue_stalled_long_scoreboard"
// or "long_scoreboard") -> its short name ("long_scoreboard").
std::string stall_short_name(const std::string& cupti_name);
// The short name in plain words ("waiting on a global/local memory load"); the
// name itself, underscores as spaces, when not known.
std::string stall_in_words(const std::string& short_name);

// Kernel figures from the "counters" part (ranges named "launch <i> (<kernel>)"
// and "baseline: <name>").
void summarise_counters(const protocol::profile_raw& counters, profile_report& out);

// Lines from the "sampling" part: each PC's samples go to the line `map`
// gives it; `ptx` supplies the lines' text. Keeps the `top` hottest lines.
void summarise_samples(const protocol::profile_raw& sampling, const sass_line_map& map, const std::string& ptx,
                       size_t top, profile_report& out);

// The roofline line from the task's FLOPs and minimum bytes at `s`, the
// candidate's median time and the worker's measured peaks.
profile_roofline make_roofline(const task& t, const size_point& s, double candidate_ms, double peak_tflops,
                               double peak_gbps, double dram_bytes);

}  // namespace ptxbench
