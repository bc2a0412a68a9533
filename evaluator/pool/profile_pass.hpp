#pragma once
// The profiling pass of a candidate that reached the performance stage, as
// the supervisor runs it: after the verdict (it never changes one), a copy of
// the PTX with line info compiled here, then the two profiling jobs on spare
// workers of the GPU that judged it, one after the other (counters, then PC
// sampling: two profilers of one process, or side by side, could disturb each
// other), summarised into a profile_report. Profiles are cached by candidate
// (exact PTX, manifest, task, GPU): a resubmitted candidate costs nothing.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/pool/gpu_slot.hpp"

namespace ptxbench {

class profile_cache {
 public:
  // The cached profile for `key`, marked cached; false when none.
  bool find(const std::string& key, profile_report& out);
  void put(const std::string& key, const profile_report& p);
  static constexpr size_t k_entries = 64;

 private:
  std::mutex m_mutex;
  std::map<std::string, profile_report> m_entries;
  std::map<uint64_t, std::string> m_order;  // insertion number -> key
  uint64_t m_next = 0;
};

// 16 hex digits (FNV-1a 64) of `text`.
std::string profile_fingerprint(const std::string& text);

// Profiles the candidate of `main_job` (its task, manifest and timing seed;
// its cubin is replaced by the line-info copy of `ptx`) on spares of `slot`,
// at the task's timed size. `performance` supplies the candidate's median
// time for the roofline line. Never throws: what failed is in the report.
profile_report run_profile_pass(gpu_slot& slot, protocol::worker_job main_job, const std::string& ptx,
                                const performance_report& performance, std::atomic<uint64_t>& job_ids);

}  // namespace ptxbench
