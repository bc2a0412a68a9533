// format_profile: the profile as the model reads it. Figures that were not
// measured (-1) print as "-", and a part that could not run says why, so a
// model never reads a made-up number or a silent gap.
#include <cstdio>
#include <sstream>

#include "agent/prompt/prompt.hpp"

namespace ptxbench {
namespace {

std::string pct(double v) {
  if (v < 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", v);
  return b;
}

std::string num(double v, const char* fmt) {
  if (v < 0) return "-";
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

void kernel_table(const profile_report& p, std::ostringstream& o) {
  o << "| kernel | time (us) | SM busy | tensor pipe | DRAM | L2 | L2 hit | occupancy | smem bank conflicts | regs/thread | smem/CTA |\n"
       "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const profile_kernel& k : p.kernels)
    o << "| " << k.name << " | " << num(k.duration_us, "%.1f") << " | " << pct(k.sm_throughput_pct) << " | "
      << pct(k.tensor_pipe_pct) << " | " << pct(k.dram_throughput_pct) << " | " << pct(k.l2_throughput_pct) << " | "
      << pct(k.l2_hit_rate_pct) << " | " << pct(k.achieved_occupancy_pct) << " | "
      << num(k.smem_bank_conflicts, "%.0f") << " | " << (k.registers_per_thread < 0 ? "-" : std::to_string(k.registers_per_thread))
      << " | " << (k.shared_bytes_per_cta < 0 ? "-" : std::to_string(k.shared_bytes_per_cta)) << " |\n";
}

// The waits on local memory, with the lines that wait most: first when they
// outweigh the hottest line (leads_with_local_memory), else after the lines.
void local_memory(const profile_report& p, std::ostringstream& o) {
  const std::string words = local_memory_words(p);
  if (words.empty()) return;
  o << "Local memory: " << words;
  for (size_t i = 0; i < p.local_wait_top.size() && i < 3; ++i) {
    const profile_line& l = p.local_wait_top[i];
    o << (i == 0 ? "; most at " : ", ") << "line " << l.line << " `" << l.text << "` ("
      << num(100.0 * l.share, "%.0f") << "%)";
  }
  o << ".\n";
}

}  // namespace

std::string format_profile(const profile_report& p, size_t top_lines) {
  std::ostringstream o;
  o << "Profile at " << (p.size.empty() ? "the timed size" : p.size)
    << " (hardware counters and PC sampling; throughputs are % of the device's peak):\n";
  if (!p.kernels.empty()) {
    kernel_table(p, o);
  } else {
    o << "Kernel counters: not available (" << (p.kernels_error.empty() ? "not measured" : p.kernels_error) << ").\n";
  }
  const profile_roofline& r = p.roofline;
  if (const std::string words = roofline_words(r, "you reach"); !words.empty()) o << "Roofline: " << words << ".\n";
  if (!p.lines.empty()) {
    const bool local_first = leads_with_local_memory(p);
    if (local_first) local_memory(p, o);
    o << "Where your kernel's warps spend their time (PC samples, by line of your PTX):\n";
    for (size_t i = 0; i < p.lines.size() && i < top_lines; ++i) {
      const profile_line& l = p.lines[i];
      char b[128];
      std::snprintf(b, sizeof b, "%.0f%% of samples", 100.0 * l.share);
      o << "- line " << l.line << " `" << l.text << "`: " << b << ", mostly " << l.stall_words << " ("
        << num(100.0 * l.stall_share, "%.0f") << "% of its samples)" << blame_words(l) << "\n";
    }
    if (!local_first) local_memory(p, o);
  } else {
    o << "Stall reasons per line: not available (" << (p.lines_error.empty() ? "not measured" : p.lines_error) << ").\n";
  }
  return o.str();
}

}  // namespace ptxbench
