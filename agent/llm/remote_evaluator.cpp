#include "agent/llm/remote_evaluator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "agent/llm/http_transport.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench {
namespace {

using llm_detail::http_response;
using llm_detail::http_session;
using llm_detail::transport_status;

constexpr double k_health_timeout_s = 30;

// The item evald parses (agent/service/request.hpp), with the whole task
// document so the service needs no copy of this run's task files.
nlohmann::json item_json(const evaluation_request& r) {
  return {{"task", task_to_json(r.t)},        {"ptx", r.ptx},
          {"manifest", r.manifest_text},      {"seeds", r.seeds},
          {"hidden_seed", r.hidden_seed},     {"timing_seed", r.timing_seed},
          {"run_gpu", r.run_gpu},             {"run_timing", r.run_timing},
          {"time_limit_ms", r.time_limit_ms}, {"timing_budget_ms", r.timing_budget_ms}};
}

std::string error_message(const http_response& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  return r.body.substr(0, 300);
}

class remote_evaluator final : public evaluator {
 public:
  explicit remote_evaluator(const remote_evaluator_options& o) : m_options(o), m_in_flight(o.urls.size()) {
    if (o.urls.empty()) throw input_error("evaluator.url: give at least one evald address");
    for (const auto& u : o.urls)
      if (u.rfind("http://", 0) != 0 && u.rfind("https://", 0) != 0)
        throw input_error("evaluator.url: '" + u + "' is not an http:// or https:// address");
    for (auto& u : m_options.urls)
      while (!u.empty() && u.back() == '/') u.pop_back();
    std::string errors;
    for (const auto& u : m_options.urls) {
      http_session session;
      http_response r = session.get(u + "/v1/health", headers(), k_health_timeout_s);
      if (r.status != transport_status::ok || r.http_status != 200) {
        errors += (errors.empty() ? "" : "; ") + u + ": " +
                  (r.status != transport_status::ok ? r.transport_error : "HTTP " + std::to_string(r.http_status));
        continue;
      }
      auto j = nlohmann::json::parse(r.body, nullptr, false);
      if (!j.is_object() || !j.contains("evaluator_version") || !j["evaluator_version"].is_string())
        throw input_error("evaluator.url: " + u + "/v1/health is not an evald health answer");
      const std::string v = j["evaluator_version"].get<std::string>();
      if (!m_version.empty() && v != m_version)
        throw input_error("evaluator.url: " + u + " runs evaluator " + v + ", another service runs " + m_version +
                          "; one experiment needs one evaluator version");
      m_version = v;
      if (m_gpu.empty() && j.contains("gpu") && j["gpu"].is_string()) m_gpu = j["gpu"].get<std::string>();
    }
    if (m_version.empty()) throw std::runtime_error("no evaluation service answered: " + errors);
    if (!errors.empty()) m_gpu += " (not answering now: " + errors + ")";
  }

  std::string version() const override { return m_version; }
  std::string gpu_description() const override {
    return "remote: " + m_gpu + " via " + std::to_string(m_options.urls.size()) + " evald";
  }

  evaluation_result evaluate(const evaluation_request& request) override {
    const std::string body = item_json(request).dump();
    std::string last_error;
    double waited_s = 0;
    for (int attempt = 0; attempt < m_options.max_attempts; ++attempt) {
      size_t which = pick();
      http_response r;
      {
        http_session session;
        r = session.post(m_options.urls[which] + "/v1/evaluate", headers(), body, m_options.timeout_s);
      }
      --m_in_flight[which];
      const std::string where = m_options.urls[which];
      if (r.status != transport_status::ok) {
        last_error = where + ": " + r.transport_error;
        continue;  // the next service, or this one again
      }
      if (r.http_status == 200) {
        auto j = nlohmann::json::parse(r.body, nullptr, false);
        if (j.is_discarded()) throw std::runtime_error(where + ": the result is not JSON");
        return evaluation_result_from_json(j);
      }
      if (r.http_status == 429) {
        double wait = std::min(r.retry_after_s.value_or(1.0), m_options.max_retry_wait_s);
        if (waited_s + wait > m_options.max_retry_wait_s * m_options.max_attempts) break;
        waited_s += wait;
        --attempt;  // a full queue is no failed attempt
        last_error = where + ": queue full";
        std::this_thread::sleep_for(std::chrono::duration<double>(wait));
        continue;
      }
      last_error = where + ": HTTP " + std::to_string(r.http_status) + ": " + error_message(r);
      if (r.http_status < 500) break;  // our request is wrong: another service would say the same
    }
    throw std::runtime_error("remote evaluation failed: " + last_error);
  }

 private:
  std::vector<std::string> headers() const {
    std::vector<std::string> h{"Content-Type: application/json"};
    if (!m_options.token.empty()) h.push_back("Authorization: Bearer " + m_options.token);
    return h;
  }

  // The service with the fewest of our requests in flight; ties go round-robin.
  size_t pick() {
    std::lock_guard lock(m_mutex);
    const size_t n = m_in_flight.size(), start = m_next++ % n;
    size_t best = start;
    for (size_t k = 0; k < n; ++k) {
      size_t i = (start + k) % n;
      if (m_in_flight[i] < m_in_flight[best]) best = i;
    }
    ++m_in_flight[best];
    return best;
  }

  remote_evaluator_options m_options;
  std::string m_version, m_gpu;
  std::mutex m_mutex;
  std::vector<std::atomic<int>> m_in_flight;
  size_t m_next = 0;
};

}  // namespace

std::unique_ptr<evaluator> make_remote_evaluator(const remote_evaluator_options& options) {
  return std::make_unique<remote_evaluator>(options);
}

}  // namespace ptxbench
