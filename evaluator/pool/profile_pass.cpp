#include "evaluator/pool/profile_pass.hpp"

#include <chrono>
#include <future>
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
  auto p0 = std::chrono::steady_clock::now();
  const protocol::profile_raw counters = run_part(slot, main_job, "counters", job_ids);
  report.phase_ms["counters"] = ms(std::chrono::steady_clock::now() - p0).count();
  for (const auto& [phase, v] : counters.phase_ms) report.phase_ms["worker_" + phase] = v;
  summarise_counters(counters, report);
  auto [lm, compile_ms] = line_info.get();
  report.phase_ms["line_info_compile"] = compile_ms;
  if (!lm.compiled.ok) {
    report.lines_error = "not profiled: " + lm.problem;
  } else {
    if (!lm.problem.empty()) report.lines_error = lm.problem;
    main_job.cubin = lm.compiled.cubin;
    p0 = std::chrono::steady_clock::now();
    const protocol::profile_raw sampling = run_part(slot, main_job, "sampling", job_ids);
    report.phase_ms["sampling"] = ms(std::chrono::steady_clock::now() - p0).count();
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
