#include "evaluator/pool/profile_pass.hpp"

#include <chrono>
#include <future>
#include <optional>
#include <cstdio>

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

// One profiling job on a spare; the raw result, or an error in it.
protocol::profile_raw run_part(gpu_slot& slot, protocol::worker_job job, const std::string& part, std::atomic<uint64_t>& job_ids) {
  job.id = ++job_ids;
  job.count_only = false;
  job.profile_part = part;
  std::string start_error;
  job_outcome out = slot.count(job, start_error);
  if (!start_error.empty()) {
    protocol::profile_raw raw;
    raw.part = part;
    raw.error = "no worker for the profile: " + start_error;
    return raw;
  }
  if (out.end != job_end::result) {
    protocol::profile_raw raw;
    raw.part = part;
    raw.error = "the profiling worker was lost: " + out.cause;
    return raw;
  }
  return out.result.profile;
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
  using ms = std::chrono::duration<double, std::milli>;
  // The counters need no line information: they run on the module as judged
  // while the copy with .loc lines compiles here, off their path.
  auto line_info = std::async(std::launch::async, [&] {
    const auto c0 = std::chrono::steady_clock::now();
    line_mapped_module lm = compile_with_line_info(ptx, t.arch);
    return std::make_pair(std::move(lm), ms(std::chrono::steady_clock::now() - c0).count());
  });
  // Both parts on one spare, the counters first (one worker start, not two);
  // sampling asks for the line-info module, so it waits for its compile.
  const auto p0 = std::chrono::steady_clock::now();
  std::optional<std::pair<line_mapped_module, double>> compiled;
  std::string start_error;
  std::vector<job_outcome> parts = slot.count_series(
      [&](size_t i) -> std::optional<protocol::worker_job> {
        protocol::worker_job job = main_job;
        job.id = ++job_ids;
        job.count_only = false;
        if (i == 0) {
          job.profile_part = "counters";
          return job;
        }
        if (i > 1) return std::nullopt;
        report.phase_ms["counters"] = ms(std::chrono::steady_clock::now() - p0).count();
        compiled = line_info.get();
        if (!compiled->first.compiled.ok) return std::nullopt;
        job.profile_part = "sampling";
        job.cubin = compiled->first.compiled.cubin;
        return job;
      },
      start_error);
  const auto raw_of = [&](size_t i, const std::string& part) {
    protocol::profile_raw raw;
    raw.part = part;
    if (i < parts.size() && parts[i].end == job_end::result) return parts[i].result.profile;
    raw.error = i < parts.size() ? "the profiling worker was lost: " + parts[i].cause
                                 : "no worker for the profile: " + start_error;
    return raw;
  };
  const protocol::profile_raw counters = raw_of(0, "counters");
  if (!report.phase_ms.count("counters")) report.phase_ms["counters"] = ms(std::chrono::steady_clock::now() - p0).count();
  for (const auto& [phase, v] : counters.phase_ms) report.phase_ms["worker_" + phase] = v;
  summarise_counters(counters, report);
  if (!compiled) compiled = line_info.get();
  const auto& [lm, compile_ms] = *compiled;
  report.phase_ms["line_info_compile"] = compile_ms;
  if (!lm.compiled.ok) {
    report.lines_error = "not profiled: " + lm.problem;
  } else {
    if (!lm.problem.empty()) report.lines_error = lm.problem;
    const auto s0 = std::chrono::steady_clock::now();
    protocol::profile_raw sampling = raw_of(1, "sampling");
    // A sampling part that found nothing after the counters in one process
    // runs again on a fresh spare before the lines are given up.
    if (!sampling.ran || sampling.total_samples == 0) {
      main_job.cubin = lm.compiled.cubin;
      protocol::profile_raw fresh = run_part(slot, main_job, "sampling", job_ids);
      if (fresh.ran) sampling = std::move(fresh);
      report.phase_ms["sampling_fresh_spare"] = ms(std::chrono::steady_clock::now() - s0).count();
    }
    report.phase_ms["sampling"] = ms(std::chrono::steady_clock::now() - p0).count() - report.phase_ms["counters"];
    for (const auto& [phase, v] : sampling.phase_ms) report.phase_ms["worker_" + phase] = v;
    if (lm.problem.empty()) summarise_samples(sampling, lm.map, ptx, 20, report);
    else if (!sampling.ran) report.lines_error += "; " + sampling.error;
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
