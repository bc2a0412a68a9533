#include "agent/service/metrics.hpp"

#include <sstream>

#include "evaluator/api/verdict.hpp"

namespace ptxbench::service {

void service_metrics::record_evaluation(const evaluation_result& r, double seconds) {
  std::lock_guard lock(m_mutex);
  ++m_evaluations;
  m_seconds_sum += seconds;
  for (size_t i = 0; i < k_buckets.size(); ++i)
    if (seconds <= k_buckets[i]) {
      ++m_bucket_counts[i];
      break;
    }
  for (const auto& [s, o] : r.stages) ++m_stage_outcomes[{to_string(s), to_string(o.status)}];
  ++m_verdicts[verdict_name(r)];
}

void service_metrics::record_http(const std::string& endpoint, int status) {
  std::lock_guard lock(m_mutex);
  ++m_http[{endpoint, status}];
}

void service_metrics::record_log_failure() {
  std::lock_guard lock(m_mutex);
  ++m_log_failures;
}

uint64_t service_metrics::evaluations() const {
  std::lock_guard lock(m_mutex);
  return m_evaluations;
}

std::string service_metrics::render(int queue_waiting, int queue_running, int queue_capacity, int width,
                                    const std::vector<gpu_usage>& gpus) const {
  std::lock_guard lock(m_mutex);
  std::ostringstream o;
  o.precision(15);  // seconds summed over days keep their milliseconds (the default 6 digits rounded them)
  o << "# HELP ptxbench_evald_queue_depth Evaluations admitted and waiting for a free evaluation slot.\n"
    << "# TYPE ptxbench_evald_queue_depth gauge\nptxbench_evald_queue_depth " << queue_waiting << "\n"
    << "# HELP ptxbench_evald_in_flight Evaluations running now.\n"
    << "# TYPE ptxbench_evald_in_flight gauge\nptxbench_evald_in_flight " << queue_running << "\n"
    << "# HELP ptxbench_evald_queue_capacity Evaluations admitted at most (running and waiting); beyond it 429.\n"
    << "# TYPE ptxbench_evald_queue_capacity gauge\nptxbench_evald_queue_capacity " << queue_capacity << "\n"
    << "# HELP ptxbench_evald_width Evaluations run at once.\n"
    << "# TYPE ptxbench_evald_width gauge\nptxbench_evald_width " << width << "\n";
  o << "# HELP ptxbench_evald_evaluations_total Evaluations completed.\n"
    << "# TYPE ptxbench_evald_evaluations_total counter\nptxbench_evald_evaluations_total " << m_evaluations << "\n";
  o << "# HELP ptxbench_evald_evaluation_seconds Time from admission to result, per evaluation.\n"
    << "# TYPE ptxbench_evald_evaluation_seconds histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < k_buckets.size(); ++i) {
    cumulative += m_bucket_counts[i];
    o << "ptxbench_evald_evaluation_seconds_bucket{le=\"" << k_buckets[i] << "\"} " << cumulative << "\n";
  }
  o << "ptxbench_evald_evaluation_seconds_bucket{le=\"+Inf\"} " << m_evaluations << "\n"
    << "ptxbench_evald_evaluation_seconds_sum " << m_seconds_sum << "\n"
    << "ptxbench_evald_evaluation_seconds_count " << m_evaluations << "\n";
  o << "# HELP ptxbench_evald_stage_outcomes_total Stage outcomes of completed evaluations.\n"
    << "# TYPE ptxbench_evald_stage_outcomes_total counter\n";
  for (const auto& [k, n] : m_stage_outcomes)
    o << "ptxbench_evald_stage_outcomes_total{stage=\"" << k.first << "\",status=\"" << k.second << "\"} " << n << "\n";
  o << "# HELP ptxbench_evald_verdicts_total Completed evaluations by verdict (verdict_name: the failed stage, partial, passed or error).\n"
    << "# TYPE ptxbench_evald_verdicts_total counter\n";
  for (const auto& [v, n] : m_verdicts) o << "ptxbench_evald_verdicts_total{verdict=\"" << v << "\"} " << n << "\n";
  o << "# HELP ptxbench_evald_http_responses_total HTTP responses by endpoint and status.\n"
    << "# TYPE ptxbench_evald_http_responses_total counter\n";
  for (const auto& [k, n] : m_http)
    o << "ptxbench_evald_http_responses_total{endpoint=\"" << k.first << "\",code=\"" << k.second << "\"} " << n
      << "\n";
  o << "# HELP ptxbench_evald_log_failures_total Results that could not be written to the request log.\n"
    << "# TYPE ptxbench_evald_log_failures_total counter\nptxbench_evald_log_failures_total " << m_log_failures
    << "\n";
  if (!gpus.empty()) {
    struct family {
      const char* name;
      const char* type;
      const char* help;
      double (*value)(const gpu_usage&);
    };
    const family families[] = {
        {"ptxbench_gpu_busy_seconds_total", "counter",
         "Wall time with at least one evaluation job (checked or timed run, counting pass) on the GPU.",
         [](const gpu_usage& u) { return u.busy_s; }},
        {"ptxbench_gpu_jobs_total", "counter", "Main-worker jobs (correctness and timing) finished.",
         [](const gpu_usage& u) { return double(u.jobs); }},
        {"ptxbench_gpu_counting_passes_total", "counter", "Counting passes finished.",
         [](const gpu_usage& u) { return double(u.passes); }},
        {"ptxbench_gpu_spare_starts_total", "counter", "Spare workers started.",
         [](const gpu_usage& u) { return double(u.spare_starts); }},
        {"ptxbench_gpu_spare_start_seconds_total", "counter", "Spare starts, fork to ready, summed.",
         [](const gpu_usage& u) { return u.spare_start_s; }},
        {"ptxbench_gpu_timing_wait_seconds_total", "counter",
         "Timed runs waiting for the GPU to be theirs alone, summed.",
         [](const gpu_usage& u) { return u.timing_wait_s; }},
        {"ptxbench_gpu_worker_restarts_total", "counter", "Main workers replaced.",
         [](const gpu_usage& u) { return double(u.restarts); }},
    };
    for (const family& f : families) {
      o << "# HELP " << f.name << " " << f.help << "\n# TYPE " << f.name << " " << f.type << "\n";
      for (const gpu_usage& u : gpus) o << f.name << "{gpu=\"" << u.device << "\"} " << f.value(u) << "\n";
    }
  }
  return o.str();
}

}  // namespace ptxbench::service
