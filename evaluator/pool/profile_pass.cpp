#include "evaluator/pool/profile_pass.hpp"

#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <optional>
#include <vector>

#include "evaluator/compile/line_info.hpp"
#include "evaluator/pool/profile_summary.hpp"

namespace ptxbench {

bool profile_cache::find(const std::string& key, profile_report& out) {
  std::lock_guard lock(m_mutex);
  const auto at = m_entries.find(key);
  if (at == m_entries.end()) return false;
  out = at->second;
  out.cached = true;
  return true;
}

void profile_cache::put(const std::string& key, const profile_report& p) {
  std::lock_guard lock(m_mutex);
  if (m_entries.count(key)) return;
  m_entries[key] = p;
  m_order[m_next++] = key;
  while (m_entries.size() > k_entries) {
    m_entries.erase(m_order.begin()->second);
    m_order.erase(m_order.begin());
  }
}

std::string profile_fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

namespace {

// A part's raw result from its outcome, or why there is none.
protocol::profile_raw raw_of(const std::vector<job_outcome>& outcomes, size_t i, const std::string& part,
                             const std::string& start_error) {
  if (i < outcomes.size() && outcomes[i].end == job_end::result) return outcomes[i].result.profile;
  protocol::profile_raw raw;
  raw.part = part;
  raw.error = i < outcomes.size() ? "the profiling worker was lost: " + outcomes[i].cause
                                  : "no worker for the profile: " + start_error;
  return raw;
}

protocol::worker_job part_job(const protocol::worker_job& job, const std::string& part, std::atomic<uint64_t>& job_ids) {
  protocol::worker_job out = job;
  out.id = ++job_ids;
  out.count_only = false;
  out.profile_part = part;
  return out;
}

// What the two parts measured, the line-mapped module, and their phases.
struct profile_parts {
  protocol::profile_raw counters, sampling;
  line_mapped_module lm;
  std::map<std::string, double> phase_ms;
};

// Both parts on one spare, the counters first (one worker start, not two).
// The counters need no line information: they run on the module as judged
// while the copy with .loc lines compiles here; sampling waits for that copy's
// cubin only, and its map (two nvdisasm runs) is made while it samples.
// A sampling part that found nothing after the counters in one process runs
// again on a fresh spare before the lines are given up.
profile_parts run_parts(gpu_slot& slot, protocol::worker_job job, const std::string& ptx,
                        std::atomic<uint64_t>& job_ids) {
  using ms = std::chrono::duration<double, std::milli>;
  profile_parts out;
  auto line_info = std::async(std::launch::async, [&] {
    const auto c0 = std::chrono::steady_clock::now();
    line_mapped_module lm = compile_line_info_copy(ptx, job.t.arch);
    return std::make_pair(std::move(lm), ms(std::chrono::steady_clock::now() - c0).count());
  });
  std::future<double> mapping;
  const auto p0 = std::chrono::steady_clock::now();
  const auto take_compiled = [&] {  // once: get() leaves the future invalid
    if (!line_info.valid()) return;
    auto [lm, compile_ms] = line_info.get();
    out.lm = std::move(lm);
    out.phase_ms["line_info_compile"] = compile_ms;
    // Reads the cubin and writes only the map and the problem, which nothing
    // reads before `mapping` is over.
    mapping = std::async(std::launch::async, [&] {
      const auto m0 = std::chrono::steady_clock::now();
      map_line_info(out.lm, ptx);
      return ms(std::chrono::steady_clock::now() - m0).count();
    });
  };
  std::string start_error;
  const std::vector<job_outcome> outcomes = slot.count_series(
      [&](size_t i) -> std::optional<protocol::worker_job> {
        if (i == 0) return part_job(job, "counters", job_ids);
        if (i > 1) return std::nullopt;
        out.phase_ms["counters"] = ms(std::chrono::steady_clock::now() - p0).count();
        take_compiled();
        if (!out.lm.compiled.ok) return std::nullopt;
        protocol::worker_job sampling = part_job(job, "sampling", job_ids);
        sampling.cubin = out.lm.compiled.cubin;
        return sampling;
      },
      start_error);
  if (!out.phase_ms.count("counters")) out.phase_ms["counters"] = ms(std::chrono::steady_clock::now() - p0).count();
  take_compiled();
  out.phase_ms["line_info_map"] = mapping.get();
  out.counters = raw_of(outcomes, 0, "counters", start_error);
  for (const auto& [phase, v] : out.counters.phase_ms) out.phase_ms["worker_" + phase] = v;
  if (!out.lm.compiled.ok) return out;
  out.sampling = raw_of(outcomes, 1, "sampling", start_error);
  if (!out.sampling.ran || out.sampling.total_samples == 0) {
    const auto s0 = std::chrono::steady_clock::now();
    job.cubin = out.lm.compiled.cubin;
    std::string fresh_error;
    const job_outcome fresh = slot.count(part_job(job, "sampling", job_ids), fresh_error);
    const protocol::profile_raw retried = raw_of({fresh}, fresh_error.empty() ? 0 : 1, "sampling", fresh_error);
    if (retried.ran) out.sampling = retried;
    out.phase_ms["sampling_fresh_spare"] = ms(std::chrono::steady_clock::now() - s0).count();
  }
  out.phase_ms["sampling"] = ms(std::chrono::steady_clock::now() - p0).count() - out.phase_ms["counters"];
  for (const auto& [phase, v] : out.sampling.phase_ms) out.phase_ms["worker_" + phase] = v;
  return out;
}

}  // namespace

profile_report run_profile_pass(gpu_slot& slot, protocol::worker_job main_job, const std::string& ptx,
                                const performance_report& performance, std::atomic<uint64_t>& job_ids) {
  const auto t0 = std::chrono::steady_clock::now();
  profile_report report;
  const task& t = main_job.t;
  int timed = 0;
  for (size_t i = 0; i < t.sizes.size(); ++i)
    if (t.sizes[i].timed) {
      timed = int(i);
      break;
    }
  report.size = performance.size;
  main_job.count_size = timed;
  main_job.count_seed = main_job.timing_seed;
  const profile_parts parts = run_parts(slot, main_job, ptx, job_ids);
  report.phase_ms = parts.phase_ms;
  summarise_counters(parts.counters, report);
  if (!parts.lm.compiled.ok) {
    report.lines_error = "not profiled: " + parts.lm.problem;
  } else if (!parts.lm.problem.empty()) {
    report.lines_error = parts.lm.problem;
    if (!parts.sampling.ran) report.lines_error += "; " + parts.sampling.error;
  } else {
    summarise_samples(parts.sampling, parts.lm.map, ptx, 20, report);
  }
  double dram_bytes = 0;
  for (const profile_kernel& k : report.kernels)
    if (!k.baseline && k.dram_bytes > 0) dram_bytes += k.dram_bytes;
  const protocol::worker_hello hello = slot.hello();
  report.roofline = make_roofline(t, t.sizes[size_t(timed)], performance.candidate_ms,
                                  performance.peak_tflops > 0 ? performance.peak_tflops : hello.peak_tflops,
                                  hello.copy_gbps, dram_bytes);
  report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace ptxbench
