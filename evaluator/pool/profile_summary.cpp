#include "evaluator/pool/profile_summary.hpp"

#include "evaluator/compile/ptx_text.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <string_view>

namespace ptxbench {

namespace {
// A long-scoreboard wait on a local-memory load, in words.
constexpr const char* k_local_wait_words = "waiting on a local-memory load (registers spilled by ptxas, or a .local array)";
}  // namespace

std::string stall_short_name(const std::string& cupti_name) {
  std::string s = cupti_name;
  for (const char* prefix : {"smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_"})
    if (s.rfind(prefix, 0) == 0) {
      s = s.substr(std::string(prefix).size());
      break;
    }
  const std::string suffix = "_not_issued";
  if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    s.resize(s.size() - suffix.size());
  return s;
}

std::string stall_in_words(const std::string& short_name) {
  static const std::map<std::string, std::string> words = {
      {"barrier", "waiting at a CTA barrier (bar.sync)"},
      {"membar", "waiting on a memory fence"},
      {"long_scoreboard", "waiting on a global/local memory load (L1TEX)"},
      {"short_scoreboard", "waiting on shared memory or a special-function result"},
      {"mio_throttle", "shared-memory instruction queue full (bank conflicts or too many smem ops)"},
      {"lg_throttle", "global/local memory queue full (local-memory spills or too many loads)"},
      {"tex_throttle", "texture/L1TEX queue full"},
      {"math_pipe_throttle", "math pipe busy"},
      {"wait", "fixed-latency dependency"},
      {"sleeping", "sleeping (nanosleep back-off or a suspended try_wait)"},
      {"branch_resolving", "resolving a branch"},
      {"dispatch_stall", "dispatch stall"},
      {"drain", "draining memory stores at exit"},
      {"imc_miss", "constant cache miss"},
      {"no_instructions", "instruction cache miss"},
      {"not_selected", "ready but another warp issued"},
      {"selected", "issuing (not stalled)"},
      {"misc", "miscellaneous"},
      {"gmma", "waiting on a warpgroup MMA (wgmma) to complete"},
      {"tensor_pipe", "waiting on the tensor pipe"},
  };
  const auto w = words.find(short_name);
  if (w != words.end()) return w->second;
  std::string s = short_name;
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

namespace {

double value_or(const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : -1; }

using line_stalls = std::map<int, std::map<std::string, uint64_t>>;  // line -> stall -> samples

struct blame {
  uint64_t samples = 0;
  std::set<int> from;
};

uint64_t sum_of(const std::map<std::string, uint64_t>& stalls) {
  uint64_t n = 0;
  for (const auto& [reason, m] : stalls) n += m;
  return n;
}

// Blame through the barrier (as profilers shift a waiter's idle time to what
// it waits for): consumers spinning on an mbarrier that TMA loads fill wait
// for the producer. The share of the producer's samples spent other than
// waiting for the consumers (issuing, computing addresses, or waiting for its
// own loads before issuing more) is the share of the consumers' wait samples
// charged to the producer's lines, in proportion to those lines' own samples
// and in their own stall mix. A producer that mostly waits for free slots
// (the consumers are the bottleneck) takes little; one that serialises its
// loads takes most. Samples move; none are added.
std::map<int, blame> blame_through_barriers(const ptx_text::barrier_roles& roles, line_stalls& by_line) {
  std::map<int, blame> out;
  if (roles.producer_loops.empty()) return out;
  std::set<int> waits_for_consumers, consumer_waits;
  for (const auto& w : roles.waits)
    for (int l = w.first; l <= w.last; ++l) {
      if (!w.in_producer) consumer_waits.insert(l);
      else if (!w.own_loads) waits_for_consumers.insert(l);
    }
  std::map<int, uint64_t> producer;  // line -> samples, of the lines that take blame
  uint64_t busy = 0, waiting = 0;
  for (const auto& [line, stalls] : by_line) {
    if (!roles.in_producer(line)) continue;
    const uint64_t n = sum_of(stalls);
    if (waits_for_consumers.count(line) || consumer_waits.count(line)) {
      waiting += n;
    } else {
      producer[line] = n;
      busy += n;
    }
  }
  if (busy == 0) return out;
  const double f = double(busy) / double(busy + waiting);
  // The rounding's rest of each move goes to the producer's hottest line.
  const int hottest = std::max_element(producer.begin(), producer.end(), [](const auto& a, const auto& b) {
                        return a.second < b.second;
                      })->first;
  for (int c : consumer_waits) {
    auto at = by_line.find(c);
    if (at == by_line.end() || roles.in_producer(c)) continue;
    uint64_t moved = 0;
    for (auto& [reason, n] : at->second) {
      const uint64_t m = uint64_t(double(n) * f);
      n -= m;
      moved += m;
    }
    if (moved == 0) continue;
    // Each producer line takes its share.
    uint64_t given = 0;
    for (const auto& [line, n] : producer) {
      const uint64_t take = moved * n / busy;
      given += take;
      out[line].samples += take;
      if (take) out[line].from.insert(c);
    }
    out[hottest].samples += moved - given;
    out[hottest].from.insert(c);
  }
  // Into each producer line's own stall mix (its dominant reason takes the rest).
  for (const auto& [line, b] : out) {
    auto& stalls = by_line[line];
    const uint64_t own = sum_of(stalls);
    std::string top;
    uint64_t given = 0;
    for (auto& [reason, n] : stalls) {
      if (top.empty() || n > stalls[top]) top = reason;
      const uint64_t take = b.samples * n / own;
      given += take;
      n += take;
    }
    stalls[top] += b.samples - given;
  }
  return out;
}

}  // namespace

void summarise_counters(const protocol::profile_raw& counters, profile_report& out) {
  if (!counters.ran) {
    out.kernels_error = counters.error.empty() ? "the counter pass did not run" : counters.error;
    return;
  }
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < counters.metrics.size(); ++i) col[counters.metrics[i]] = i;
  const auto get = [&](const std::vector<double>& v, const char* m) {
    const auto c = col.find(m);
    return c == col.end() ? -1.0 : value_or(v, c->second);
  };
  size_t launch = 0;
  for (size_t r = 0; r < counters.ranges.size() && r < counters.values.size(); ++r) {
    const std::vector<double>& v = counters.values[r];
    profile_kernel k;
    k.baseline = counters.ranges[r].rfind("baseline", 0) == 0;
    k.name = k.baseline ? counters.ranges[r].substr(std::min<size_t>(10, counters.ranges[r].size()))
                        : "yours: " + counters.ranges[r];
    const double ns = get(v, "gpu__time_duration.sum");
    k.duration_us = ns >= 0 ? ns / 1000.0 : -1;
    k.sm_throughput_pct = get(v, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
    k.tensor_pipe_pct = std::max(get(v, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
                                 get(v, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"));
    k.dram_throughput_pct = get(v, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
    k.l2_throughput_pct = get(v, "lts__throughput.avg.pct_of_peak_sustained_elapsed");
    k.l2_hit_rate_pct = get(v, "lts__t_sector_hit_rate.pct");
    k.achieved_occupancy_pct = get(v, "sm__warps_active.avg.pct_of_peak_sustained_active");
    k.smem_bank_conflicts = get(v, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum");
    k.dram_bytes = get(v, "dram__bytes.sum");
    if (!k.baseline) {
      if (launch < counters.registers.size()) k.registers_per_thread = counters.registers[launch];
      if (launch < counters.shared_bytes.size()) k.shared_bytes_per_cta = counters.shared_bytes[launch];
      ++launch;
    }
    out.kernels.push_back(std::move(k));
  }
  out.ran = out.ran || !out.kernels.empty();
}

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t at = 0; at < text.size();) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    out.push_back(text.substr(at, eol - at));
    at = eol + 1;
  }
  return out;
}

std::string line_text(const std::vector<std::string_view>& lines, int line) {
  if (line < 1 || size_t(line) > lines.size()) return "";
  std::string_view s = lines[size_t(line - 1)];
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  std::string out(s.substr(0, 160));
  if (s.size() > 160) out += "…";
  return out;
}


// One line of the profile: its samples, dominant stall and the words for it.
profile_line make_line(int line, std::string text, const std::map<std::string, uint64_t>& stalls, uint64_t total,
                       uint64_t local_waits_at_line, const blame* blamed) {
  profile_line l;
  l.line = line;
  l.text = std::move(text);
  for (const auto& [reason, n] : stalls) {
    l.samples += n;
    // "selected" is issuing, not a stall: the dominant stall is among the others when any.
    if (reason != "selected" && (l.stall.empty() || n > stalls.at(l.stall))) l.stall = reason;
  }
  if (l.stall.empty()) l.stall = "selected";
  l.share = double(l.samples) / double(total);
  l.stall_share = l.samples ? double(stalls.at(l.stall)) / double(l.samples) : 0;
  l.stall_words = stall_in_words(l.stall);
  if (blamed) {
    l.blamed = blamed->samples;
    l.blamed_from.assign(blamed->from.begin(), blamed->from.end());
  }
  // The instruction, after any label on its line ("w1: mbarrier.try_wait...").
  std::string_view op = l.text;
  if (const size_t colon = op.find(": "); colon != std::string_view::npos && op.find(' ') > colon &&
                                          op.substr(0, colon).find("::") == std::string_view::npos)
    op.remove_prefix(colon + 2);
  // Hopper samples a warp in wgmma.wait_group as a barrier stall (H100,
  // CUPTI 13.0); at such a line the words name what it waits for.
  if (l.stall == "barrier" && op.rfind("wgmma.wait_group", 0) == 0)
    l.stall_words = "waiting for its wgmma groups to complete (wgmma.wait_group; sampled as a barrier stall)";
  // An mbarrier wait (SYNCS.PHASECHK) is sampled as a long-scoreboard stall
  // (H100, CUPTI 13.0): what it waits for is the barrier's phase.
  if (l.stall == "long_scoreboard" && (op.rfind("mbarrier.try_wait", 0) == 0 || op.rfind("mbarrier.test_wait", 0) == 0))
    l.stall_words = "waiting for the mbarrier's phase to complete (its TMA loads or the other warps' arrivals)";
  // Waits on local memory are spills (or a .local array): say so, the fix
  // differs from that of a slow global load.
  if (l.stall == "long_scoreboard" && local_waits_at_line && 2 * local_waits_at_line >= stalls.at(l.stall))
    l.stall_words = k_local_wait_words;
  return l;
}

}  // namespace

void summarise_samples(const protocol::profile_raw& sampling, const sass_line_map& map, const std::string& ptx,
                       size_t top, profile_report& out) {
  if (!sampling.ran) {
    out.lines_error = sampling.error.empty() ? "PC sampling did not run" : sampling.error;
    return;
  }
  if (!map.available) {
    out.lines_error = "no SASS-to-PTX line map: " + map.error;
    return;
  }
  // Loads of local memory by their PTX: ld.local, and generic loads through
  // an address from cvta.local (SASS LD, which the SASS alone cannot tell
  // from a global load).
  const std::set<int> local_lines = ptx_text::local_load_lines(ptx);
  line_stalls by_line;
  std::map<int, uint64_t> local_waits;  // line -> scoreboard samples waiting on a local-memory load
  uint64_t total = 0, unmapped = 0;
  for (const auto& pc : sampling.pcs) {
    if (map.lines.count(pc.function) == 0) continue;  // not a kernel of the candidate's module
    const int line = map.line_of(pc.function, pc.pc_offset);
    // A warp waiting on a scoreboard waits for a load's register: the samples
    // go to the load's line (sass_dataflow.hpp), where the cause is.
    const int awaited = map.awaited_line_of(pc.function, pc.pc_offset);
    for (const auto& [reason, n] : pc.samples) {
      total += n;
      const std::string stall = stall_short_name(reason);
      const int at = awaited > 0 && (stall == "long_scoreboard" || stall == "short_scoreboard") ? awaited : line;
      if (at == 0) {
        unmapped += n;
        continue;
      }
      by_line[at][stall] += n;
      // A wait on a local load: at a line that loads local memory (the load
      // whose register is awaited, or a local round trip's own line with no
      // load's register awaited: a volatile store or load held until the
      // access before it completes, H100, the wgmma attention kernel's
      // reloaded accumulators), or on a load ptxas made local (LDL).
      if (stall == "long_scoreboard" &&
          (local_lines.count(at) > 0 || (at == awaited && map.awaits_local_load(pc.function, pc.pc_offset))))
        local_waits[at] += n;
    }
  }
  out.samples = total;
  if (total == 0) {
    out.lines_error = "PC sampling ran but recorded no samples of the candidate's kernels";
    return;
  }
  out.unmapped_share = double(unmapped) / double(total);
  const std::map<int, blame> blamed = blame_through_barriers(ptx_text::barrier_roles_of(ptx), by_line);
  uint64_t local = 0;
  for (const auto& [line, n] : local_waits) local += n;
  out.local_wait_share = double(local) / double(total);
  out.local_wait_lines = int(local_waits.size());
  const std::vector<std::string_view> lines = split_lines(ptx);
  for (const auto& [line, stalls] : by_line) {
    const auto b = blamed.find(line);
    const uint64_t local_at_line = local_waits.count(line) ? local_waits.at(line) : 0;
    out.lines.push_back(make_line(line, line_text(lines, line), stalls, total, local_at_line,
                                  b == blamed.end() ? nullptr : &b->second));
  }
  const auto most_samples_first = [](const profile_line& a, const profile_line& b) { return a.samples > b.samples; };
  std::stable_sort(out.lines.begin(), out.lines.end(), most_samples_first);
  if (out.lines.size() > top) out.lines.resize(top);
  for (const auto& [line, n] : local_waits) {
    profile_line l;
    l.line = line;
    l.text = line_text(lines, line);
    l.samples = n;
    l.share = double(n) / double(total);
    l.stall = "long_scoreboard";
    l.stall_words = k_local_wait_words;
    const uint64_t at_line = sum_of(by_line.at(line));
    l.stall_share = at_line ? double(n) / double(at_line) : 0;
    out.local_wait_top.push_back(std::move(l));
  }
  std::stable_sort(out.local_wait_top.begin(), out.local_wait_top.end(), most_samples_first);
  if (out.local_wait_top.size() > 5) out.local_wait_top.resize(5);
  out.ran = true;
}

profile_roofline make_roofline(const task& t, const size_point& s, double candidate_ms, double peak_tflops,
                               double peak_gbps, double dram_bytes) {
  profile_roofline r;
  r.flops = task_flops(t, s);
  for (const auto& ts : t.tensors) r.bytes += double(tensor_elements(ts, s)) * double(dtype_bytes(ts.type));
  r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  r.peak_tflops = peak_tflops;
  r.peak_gbps = peak_gbps;
  if (candidate_ms > 0) {
    r.achieved_tflops = r.flops / (candidate_ms * 1e-3) / 1e12;
    r.achieved_gbps = r.bytes / (candidate_ms * 1e-3) / 1e9;
    if (dram_bytes > 0) r.dram_gbps = dram_bytes / (candidate_ms * 1e-3) / 1e9;
  }
  // The ridge point: intensity at which the two roofs meet (FLOP per byte).
  const double ridge = peak_gbps > 0 ? peak_tflops * 1e12 / (peak_gbps * 1e9) : 0;
  r.bound = ridge > 0 ? (r.intensity >= ridge ? "compute" : "memory") : "";
  return r;
}

}  // namespace ptxbench
