#include "agent/service/service.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "agent/judge/judge.hpp"
#include "agent/service/request.hpp"
#include "agent/service/text.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::service {
namespace {

using clock_type = std::chrono::steady_clock;
// A rejected request's body is logged only up to this many bytes.
constexpr size_t k_logged_rejected_bytes = 4096;

http_answer error_answer(int status, const std::string& message) {
  http_answer a;
  a.status = status;
  a.body = json_text(nlohmann::json{{"error", message}, {"status", status}});
  return a;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0, n; i < s.size(); i += n)
    if ((n = utf8_char_length(s, i)) == 0) return false;
  return true;
}

// The token's length may leak; its content does not.
bool constant_time_equal(const std::string& given, const std::string& expected) {
  if (given.size() != expected.size() || expected.empty()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < given.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ expected[i]);
  return diff == 0;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  // An address only, parsed whole: "127.0.0.1.example.invalid" is a name that resolves anywhere.
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  const std::string bare = bracketed ? host.substr(1, host.size() - 2) : host;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, bare.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

evald_service::evald_service(evaluator& eval, std::vector<task> tasks, service_options options, request_log* log)
    : m_eval(eval), m_task_list(std::move(tasks)), m_options(std::move(options)), m_log(log) {
  for (const auto& t : m_task_list) m_tasks.emplace(t.id, t);
  int width = m_options.width > 0 ? m_options.width : std::max(2, int(std::thread::hardware_concurrency()));
  m_options.width = width;
  m_queue = std::make_unique<eval_queue>(width, m_options.capacity);
}

http_answer evald_service::handle(const http_request& request) noexcept {
  try {
    return route(request);
  } catch (const input_error& e) {
    return error_answer(400, e.what());
  } catch (const std::exception& e) {
    return error_answer(500, std::string("internal error: ") + e.what());
  } catch (...) {
    return error_answer(500, "internal error");
  }
}

std::optional<http_answer> evald_service::screen(const http_request& head) noexcept {
  try {
    if (head.path != "/v1/health" && !authorised(head)) return unauthorised();
  } catch (...) {
    return http_answer{500, R"({"error":"internal error","status":500})"};
  }
  return std::nullopt;
}

void evald_service::record_http(const std::string& path, int status) noexcept {
  try {
    // Known routes only as labels: a client must not grow the metrics with made-up paths.
    std::string label = path;
    if (label.rfind("/v1/tasks/", 0) == 0) label = "/v1/tasks/<id>";
    else if (label != "/v1/evaluate" && label != "/v1/evaluate/batch" && label != "/v1/tasks" &&
             label != "/v1/health" && label != "/v1/metrics")
      label = "other";
    m_metrics.record_http(label, status);
  } catch (...) {
  }
}

bool evald_service::authorised(const http_request& request) const {
  if (m_options.token.empty()) return true;
  const std::string prefix = "Bearer ";
  if (request.authorization.rfind(prefix, 0) != 0) return false;
  return constant_time_equal(request.authorization.substr(prefix.size()), m_options.token);
}

http_answer evald_service::unauthorised() const {
  http_answer a = error_answer(401, "missing or wrong bearer token (Authorization: Bearer ...)");
  a.headers.push_back({"WWW-Authenticate", "Bearer"});
  return a;
}

http_answer evald_service::route(const http_request& request) {
  const std::string& p = request.path;
  const bool get = request.method == "GET", post = request.method == "POST";
  if (p == "/v1/health") return get ? health() : error_answer(405, "use GET for " + p);
  if (!authorised(request)) return unauthorised();
  if (p == "/v1/evaluate" || p == "/v1/evaluate/batch") {
    if (!post) return error_answer(405, "use POST for " + p);
    return evaluate(request, p == "/v1/evaluate/batch");
  }
  if (p == "/v1/tasks" || p.rfind("/v1/tasks/", 0) == 0) return get ? tasks(p) : error_answer(405, "use GET for " + p);
  if (p == "/v1/metrics") {
    if (!get) return error_answer(405, "use GET for " + p);
    http_answer a;
    a.content_type = "text/plain; version=0.0.4";
    a.body = m_metrics.render(m_queue->waiting(), m_queue->running(), m_queue->capacity(), m_queue->width(),
                              m_eval.usage());
    return a;
  }
  return error_answer(404, "no route " + request.method + " " + p);
}

http_answer evald_service::health() const {
  http_answer a;
  a.body = json_text({{"status", "ok"},
                       {"evaluator_version", m_eval.version()},
                       {"gpu", m_eval.gpu_description()},
                       {"tasks", m_task_list.size()},
                       {"queue", {{"waiting", m_queue->waiting()},
                                  {"running", m_queue->running()},
                                  {"capacity", m_queue->capacity()},
                                  {"width", m_queue->width()}}}});
  return a;
}

http_answer evald_service::tasks(const std::string& path) const {
  http_answer a;
  if (path == "/v1/tasks") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& t : m_task_list)
      list.push_back({{"id", t.id}, {"family", t.family}, {"arch", t.arch}, {"runs_on_hopper", t.runs_on_hopper},
                      {"target_instructions", t.target_instructions}});
    a.body = json_text({{"tasks", list}});
    return a;
  }
  const std::string id = path.substr(std::string("/v1/tasks/").size());
  auto it = m_tasks.find(id);
  if (it == m_tasks.end()) return error_answer(404, "unknown task '" + truncated(id, 100) + "'");
  a.body = json_text(task_to_json(it->second));
  return a;
}

void evald_service::log_row(const service_request_row& row) {
  if (!m_log) return;
  try {
    m_log->append(row);
  } catch (const std::exception& e) {
    // The answer is still given: the evaluation happened; the operator sees the
    // failure here and in ptxbench_evald_log_failures_total.
    m_metrics.record_log_failure();
    std::fprintf(stderr, "evald: request log: %s\n", e.what());
  }
}

namespace {

// The requests of a body: the body itself, or a batch's entries (an array, or
// {"requests": [...]}) with their JSON paths; or why it is refused (status).
struct request_list {
  std::vector<const nlohmann::json*> raw;
  std::vector<std::string> paths;
  int status = 0;
  std::string error;
};

request_list requests_of(const nlohmann::json& body, bool batch, size_t limit) {
  request_list out;
  auto refuse = [&](int status, std::string error) {
    out.status = status;
    out.error = std::move(error);
    return out;
  };
  if (!batch) {
    out.raw.push_back(&body);
    out.paths.push_back("$");
    return out;
  }
  const nlohmann::json* list = &body;
  std::string base = "$";
  if (body.is_object()) {
    if (!body.contains("requests") || body.size() != 1)
      return refuse(400, "$: expected an array of requests or {\"requests\": [...]}");
    list = &body.at("requests");
    base = "$.requests";
  }
  if (!list->is_array()) return refuse(400, base + ": expected an array of requests");
  if (list->empty()) return refuse(400, base + ": the batch is empty");
  if (list->size() > limit)
    return refuse(413, base + ": " + std::to_string(list->size()) + " requests; at most " + std::to_string(limit) +
                           " in one batch");
  for (size_t i = 0; i < list->size(); ++i) {
    out.raw.push_back(&(*list)[i]);
    out.paths.push_back(base + "[" + std::to_string(i) + "]");
  }
  return out;
}

}  // namespace

http_answer evald_service::evaluate(const http_request& request, bool batch) {
  const std::string endpoint = batch ? "/v1/evaluate/batch" : "/v1/evaluate";
  auto reject = [&](int status, const std::string& message) {
    http_answer a = error_answer(status, message);
    log_row({0, "", endpoint, status, 0, truncated(request.body, k_logged_rejected_bytes), nullptr, message, 0.0});
    return a;
  };
  if (request.body.size() > m_options.max_body_bytes)
    return reject(413, "body of " + std::to_string(request.body.size()) + " bytes is over the limit of " +
                           std::to_string(m_options.max_body_bytes));
  // Text that is not UTF-8 is taken with replacement characters (nlohmann
  // refuses it), so one client's stray byte does not fail a whole batch.
  json_parse_outcome parsed =
      try_parse_json_bounded(valid_utf8(request.body) ? request.body : utf8_repaired(request.body));
  if (parsed.too_deep) return reject(400, "$: " + parsed.message());
  // nlohmann's message names the byte and what it expected; it quotes at most a few bytes of the body.
  if (!parsed.ok) return reject(400, "$: the body is not valid JSON: " + truncated(parsed.error, 200));
  const nlohmann::json body = std::move(parsed.value);

  const request_list list = requests_of(body, batch, size_t(std::min(m_options.max_batch, m_options.capacity)));
  if (list.status) return reject(list.status, list.error);
  const std::vector<const nlohmann::json*>& raw = list.raw;
  const std::vector<std::string>& paths = list.paths;
  std::vector<evaluate_item> items;
  for (size_t i = 0; i < raw.size(); ++i) {
    try {
      items.push_back(parse_evaluate_item(*raw[i], paths[i], m_tasks));
    } catch (const input_error& e) {
      return reject(400, e.what());
    }
  }

  const auto admitted = clock_type::now();
  std::vector<eval_queue::job> jobs;
  for (const auto& item : items)
    jobs.push_back([this, &item]() -> evaluation_result {
      if (!item.format_problem.empty()) return format_failure_result(item.format_problem, m_eval.version());
      return m_eval.evaluate(item.request);
    });
  auto futures = m_queue->submit(std::move(jobs));
  if (!futures) {
    http_answer a = reject(429, "the evaluation queue is full (" + std::to_string(m_queue->capacity()) +
                                    " admitted); retry later");
    a.headers.push_back({"Retry-After", std::to_string(m_options.retry_after_s)});
    return a;
  }
  nlohmann::json results = nlohmann::json::array();
  std::vector<service_request_row> rows;
  for (size_t i = 0; i < futures->size(); ++i) {
    evaluation_result r;
    try {
      r = (*futures)[i].get();
    } catch (const std::exception& e) {
      // An evaluator that is no local one (a remote one that lost its service):
      // status error, never the candidate's failure.
      r = evaluator_failure_result(e.what(), m_eval.version());
    }
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - admitted).count();
    m_metrics.record_evaluation(r, ms / 1000.0);
    nlohmann::json rj = to_json(r);
    rows.push_back({0, "", endpoint, 0, int(i), json_text(*raw[i]), rj, "", ms});
    results.push_back(std::move(rj));
  }
  // Logged once the answer is made, with the status it goes out with.
  http_answer a;
  std::string failure;
  try {
    a.body = json_text(batch ? nlohmann::json{{"results", results}} : results.at(0));
  } catch (const std::exception& e) {
    failure = std::string("internal error: ") + e.what();
    a = error_answer(500, failure);
  }
  for (auto& row : rows) {
    row.http_status = a.status;
    row.error = failure;
    log_row(row);
  }
  return a;
}

}  // namespace ptxbench::service
