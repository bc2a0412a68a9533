#include "agent/http/remote_evaluator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "agent/http/transport.hpp"
#include "agent/http/url.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench {
namespace {

using http::http_response;
using http::http_session;
using http::transport_status;
using steady = std::chrono::steady_clock;

constexpr double k_health_timeout_s = 10;
constexpr double k_min_retry_wait_s = 0.5;  // a Retry-After of 0 must not become a busy loop
constexpr double k_first_backoff_s = 1;
constexpr double k_max_backoff_s = 30;

double seconds_since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }
steady::time_point seconds_from_now(double s) {
  return steady::now() + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(s));
}

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
  const json_parse_outcome j = try_parse_json_bounded(r.body);
  if (j.ok && j.value.is_object() && j.value.contains("error") && j.value["error"].is_string())
    return utf8_shortened(j.value["error"].get<std::string>(), 300);
  return utf8_shortened(r.body, 300);
}

bool is_gpu_stage(stage s) { return s == stage::runtime || s == stage::correctness || s == stage::performance; }

// Why a 200 answer is not this evaluator's result for `request` ("" when it is one).
std::string invalid_result(const nlohmann::json& j, const evaluation_request& request, const std::string& version) {
  if (!j.is_object()) return "the answer is not a JSON object";
  if (!j.contains("verdict") || !j["verdict"].is_string()) return "the answer has no verdict";
  if (!j.contains("passed") || !j["passed"].is_boolean()) return "the answer has no 'passed'";
  if (!j.contains("evaluator_version") || !j["evaluator_version"].is_string())
    return "the answer has no evaluator_version";
  if (j["evaluator_version"].get<std::string>() != version)
    return "the answer comes from evaluator " + j["evaluator_version"].get<std::string>().substr(0, 40) +
           ", the service said " + version;
  const bool passed = j["passed"].get<bool>();
  if (passed != (j["verdict"].get<std::string>() == "passed")) return "the answer's verdict and 'passed' disagree";
  if (!j.contains("stages") || !j["stages"].is_object() || !j["stages"].contains("format"))
    return "the answer has no stages";
  for (int i = 0; i < stage_count; ++i) {
    const stage s = static_cast<stage>(i);
    const auto it = j["stages"].find(to_string(s));
    if (it == j["stages"].end()) {
      if (passed) return std::string("the answer passed without stage ") + to_string(s);
      continue;  // a stage the evaluator did not reach need not be listed
    }
    if (!it->is_object() || !it->contains("status") || !(*it)["status"].is_string())
      return std::string("the answer has no status for stage ") + to_string(s);
    stage_status status;
    try {
      status = parse_stage_status((*it)["status"].get<std::string>());
    } catch (const input_error& e) {
      return std::string("stage ") + to_string(s) + ": " + e.what();
    }
    if (passed && status != stage_status::passed)
      return std::string("the answer passed with stage ") + to_string(s) + " not passed";
    if (!request.run_gpu && is_gpu_stage(s) && status != stage_status::not_run && status != stage_status::error)
      return std::string("stage ") + to_string(s) + " ran on the GPU although no GPU stage was asked for";
  }
  return "";
}

struct service_state {
  std::string url;
  int in_flight = 0;
  int failures_in_a_row = 0;
  steady::time_point down_until{};  // no attempt before this: a failure's back-off or a Retry-After
};

class remote_evaluator final : public evaluator {
 public:
  explicit remote_evaluator(const remote_evaluator_options& o) : m_options(o) {
    if (o.urls.empty()) throw input_error("evaluator.url: give at least one evald address");
    for (const auto& u : o.urls)
      if (!http::is_http_url(u))
        throw input_error("evaluator.url: '" + u + "' is not an http:// or https:// address");
    for (std::string u : o.urls) {
      while (!u.empty() && u.back() == '/') u.pop_back();
      m_services.push_back({u, 0, 0, {}});
    }
    m_id_prefix = std::to_string(std::random_device{}() & 0xffffffu);
    check_health();
  }

  std::string version() const override { return m_version; }
  std::string gpu_description() const override {
    return "remote: " + m_gpu + " via " + std::to_string(m_services.size()) + " evald";
  }

  evaluation_result evaluate(const evaluation_request& request) override {
    const std::string body = json_text(item_json(request));
    const std::string id = m_id_prefix + "-" + std::to_string(++m_requests);
    const steady::time_point start = steady::now();
    std::string last_error;
    int answered_failures = 0, lost_failures = 0;
    const uint64_t successes_before = m_successes.load();
    for (;;) {
      if (http::transfers_cancelled()) throw stopping();
      const double spent_s = seconds_since(start);
      double wait_s = 0;
      const std::optional<size_t> which = pick(wait_s);
      if (!which) {
        // Every service is down or full: wait for the first to come back, as
        // long as this evaluation may, and not at all once the services have
        // been given up (until one answers again).
        if (spent_s >= m_options.max_wait_s || m_given_up.load()) throw unavailable(spent_s, last_error);
        if (!sleep_for(std::clamp(std::min(wait_s, m_options.max_wait_s - spent_s), 0.02, 1.0))) throw stopping();
        continue;
      }
      const std::string& url = m_services[*which].url;
      http_response r;
      {
        http_session session;
        r = session.post(url + "/v1/evaluate", headers(id), body, {m_options.timeout_s, false, 0});
      }
      release(*which);
      if (r.status == transport_status::cancelled) throw stopping();
      std::string failure;
      bool answered = false;  // the service answered, and could not judge this request
      if (r.status != transport_status::ok) {
        failure = r.transport_error;
        answered = r.status == transport_status::too_large;  // an answer, and no result
      } else if (r.http_status == 200) {
        const json_parse_outcome parsed = try_parse_json_bounded(r.body);
        const nlohmann::json& j = parsed.value;
        failure = parsed.ok ? invalid_result(j, request, m_version) : "the answer is not JSON: " + parsed.message();
        if (failure.empty() && !r.request_id.empty() && r.request_id != id)
          failure = "the answer is for another request (X-Request-Id " + r.request_id + ", sent " + id + ")";
        if (failure.empty()) {
          try {
            evaluation_result result = evaluation_result_from_json(j);
            succeeded(*which);
            return result;
          } catch (const std::exception& e) {
            failure = std::string("the answer is not a result: ") + e.what();
          }
        }
        answered = true;
      } else if (r.http_status == 429) {
        const double wait = std::clamp(r.retry_after_s.value_or(1.0), k_min_retry_wait_s, m_options.max_retry_wait_s);
        hold(*which, wait);
        last_error = url + ": queue full (HTTP 429)";
        continue;  // no failed attempt: another service, or this one after its Retry-After
      } else if (r.http_status == 400 || r.http_status == 413 || r.http_status == 422) {
        succeeded(*which);  // the service is fine; this request is what it refuses
        throw std::runtime_error("remote evaluation refused by " + url + ": HTTP " + std::to_string(r.http_status) +
                                 ": " + error_message(r));
      } else {
        // 500 is evald failing on this request; 401/403/404/408/502/503/504 a
        // service that cannot be used now (a wrong token, a proxy, a restart).
        failure = "HTTP " + std::to_string(r.http_status) + ": " + error_message(r);
        answered = r.http_status == 500;
      }
      failed(*which);
      last_error = url + ": " + failure;
      if (answered && ++answered_failures >= m_options.max_attempts)
        throw std::runtime_error("remote evaluation failed " + std::to_string(answered_failures) +
                                 " times; the last: " + last_error);
      // Connections lost on this request while the services judged others: a
      // request that takes a service down (not an outage) ends as an error
      // rather than stopping the run at every resume.
      if (!answered && ++lost_failures >= m_options.max_attempts && m_successes.load() > successes_before)
        throw std::runtime_error("remote evaluation failed " + std::to_string(lost_failures) +
                                 " times while the services judged other requests; the last: " + last_error);
      if (seconds_since(start) >= m_options.max_wait_s && !any_up())
        throw unavailable(seconds_since(start), last_error);
    }
  }

 private:
  void check_health() {
    std::vector<std::string> answers(m_services.size()), errors(m_services.size());
    std::vector<std::thread> probes;
    for (size_t i = 0; i < m_services.size(); ++i)
      probes.emplace_back([&, i] {
        http_session session;
        http_response r = session.get(m_services[i].url + "/v1/health", headers(""), k_health_timeout_s);
        if (r.status != transport_status::ok) errors[i] = r.transport_error;
        else if (r.http_status != 200) errors[i] = "HTTP " + std::to_string(r.http_status);
        else answers[i] = std::move(r.body);
      });
    for (auto& p : probes) p.join();
    std::string down;
    for (size_t i = 0; i < m_services.size(); ++i) {
      const std::string& u = m_services[i].url;
      if (!errors[i].empty()) {
        down += (down.empty() ? "" : "; ") + u + ": " + errors[i];
        failed(i);  // tried again after its back-off
        continue;
      }
      const nlohmann::json j = try_parse_json_bounded(answers[i]).value;
      if (!j.is_object() || !j.contains("evaluator_version") || !j["evaluator_version"].is_string())
        throw input_error("evaluator.url: " + u + "/v1/health is not an evald health answer");
      const std::string v = j["evaluator_version"].get<std::string>();
      if (!m_version.empty() && v != m_version)
        throw input_error("evaluator.url: " + u + " runs evaluator " + v + ", another service runs " + m_version +
                          "; one experiment needs one evaluator version");
      m_version = v;
      if (m_gpu.empty() && j.contains("gpu") && j["gpu"].is_string()) m_gpu = j["gpu"].get<std::string>();
    }
    if (m_version.empty()) throw std::runtime_error("no evaluation service answered: " + down);
    if (!down.empty()) m_gpu += " (not answering now: " + down + ")";
  }

  std::vector<std::string> headers(const std::string& request_id) const {
    std::vector<std::string> h{"Content-Type: application/json"};
    if (!request_id.empty()) h.push_back("X-Request-Id: " + request_id);
    if (!m_options.token.empty()) h.push_back("Authorization: Bearer " + m_options.token);
    return h;
  }

  // Among the services that are up, the one with the fewest of our requests
  // in flight (ties round-robin), counted as in flight; nullopt when none is
  // up, with `wait_s` until the first is.
  std::optional<size_t> pick(double& wait_s) {
    std::lock_guard lock(m_mutex);
    const steady::time_point now = steady::now();
    const size_t n = m_services.size(), start = m_next++ % n;
    std::optional<size_t> best;
    steady::time_point first_up = steady::time_point::max();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (start + k) % n;
      const service_state& s = m_services[i];
      if (s.down_until > now) {
        first_up = std::min(first_up, s.down_until);
        continue;
      }
      if (!best || s.in_flight < m_services[*best].in_flight) best = i;
    }
    if (best) {
      ++m_services[*best].in_flight;
      return best;
    }
    wait_s = std::chrono::duration<double>(first_up - now).count();
    return std::nullopt;
  }

  bool any_up() {
    std::lock_guard lock(m_mutex);
    const steady::time_point now = steady::now();
    for (const service_state& s : m_services)
      if (s.down_until <= now) return true;
    return false;
  }

  void release(size_t i) {
    std::lock_guard lock(m_mutex);
    --m_services[i].in_flight;
  }
  void succeeded(size_t i) {
    std::lock_guard lock(m_mutex);
    m_services[i].failures_in_a_row = 0;
    m_given_up = false;
    ++m_successes;
  }
  // Down for 1 s, doubling with each failure in a row up to 30 s, give or take a fifth.
  void failed(size_t i) {
    std::lock_guard lock(m_mutex);
    service_state& s = m_services[i];
    const double doublings = double(1 << std::min(s.failures_in_a_row, 10));
    const double backoff = std::min(k_max_backoff_s, k_first_backoff_s * doublings);
    ++s.failures_in_a_row;
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    s.down_until = seconds_from_now(backoff * jitter(m_random));
  }
  void hold(size_t i, double wait_s) {
    std::lock_guard lock(m_mutex);
    m_services[i].down_until = std::max(m_services[i].down_until, seconds_from_now(wait_s));
  }

  // Sleeps in short slices; false when cancel_transfers() cut it short.
  static bool sleep_for(double seconds) {
    const steady::time_point until = seconds_from_now(seconds);
    while (steady::now() < until) {
      if (http::transfers_cancelled()) return false;
      std::this_thread::sleep_for(std::min<steady::duration>(until - steady::now(), std::chrono::milliseconds(20)));
    }
    return !http::transfers_cancelled();
  }

  static evaluator_unavailable stopping() { return evaluator_unavailable("not judged: the run is stopping"); }
  evaluator_unavailable unavailable(double spent_s, const std::string& last_error) {
    m_given_up = true;
    char spent[32];
    std::snprintf(spent, sizeof spent, "%.0f", spent_s);
    return evaluator_unavailable("no evaluation service could judge for " + std::string(spent) + " s (" +
                                 std::to_string(m_services.size()) + " configured; the last: " +
                                 (last_error.empty() ? "none answered" : last_error) + ")");
  }

  remote_evaluator_options m_options;
  std::string m_version, m_gpu, m_id_prefix;
  std::mutex m_mutex;
  std::vector<service_state> m_services;  // urls fixed at construction; the rest under m_mutex
  size_t m_next = 0;
  std::mt19937 m_random{std::random_device{}()};
  std::atomic<uint64_t> m_requests{0};
  std::atomic<bool> m_given_up{false};   // an evaluation found no service for max_wait_s; cleared by a success
  std::atomic<uint64_t> m_successes{0};  // answers taken, over all evaluations
};

}  // namespace

std::unique_ptr<evaluator> make_remote_evaluator(const remote_evaluator_options& options) {
  return std::make_unique<remote_evaluator>(options);
}

}  // namespace ptxbench
