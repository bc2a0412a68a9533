#pragma once
// The evaluation service (`ptxbench evald`) without its transport: routes,
// admission, authentication, logging and metrics over one evaluator. The
// HTTP server (server.hpp) hands each request here; tests can too.
//
//   POST /v1/evaluate        one item (request.hpp)          -> the result, as `eval --json` prints it
//   POST /v1/evaluate/batch  [items] or {"requests": [items]} -> {"results": [...]} in request order
//   GET  /v1/tasks           the task suite (id, family, arch, targets); /v1/tasks/<id> one task document
//   GET  /v1/health          status, evaluator version, GPU, queue
//   GET  /v1/metrics         Prometheus text
// Errors are JSON {"error": "...", "status": N}: 400 with the JSON path of the
// bad field, 401 without the bearer token, 404, 405, 413, 429 with Retry-After
// when the queue is full, 500 for the service's own failures. handle() never
// throws. (The server adds 400, 408, 411, 413 and 431 for requests whose
// framing or pace is wrong, before a body is read: agent/http/server.hpp.)
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/http/server.hpp"
#include "agent/service/eval_queue.hpp"
#include "agent/service/metrics.hpp"
#include "agent/store/request_log.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench::service {

struct service_options {
  std::string token;           // the bearer token every route but /v1/health requires; "" = none
  int width = 0;               // evaluations at once; 0 = the hardware threads (at least 2)
  int capacity = 64;           // evaluations admitted at once (running and waiting); beyond: 429
  int max_batch = 256;         // items in one batch request
  size_t max_body_bytes = 64u << 20;
  int retry_after_s = 1;       // Retry-After sent with 429
};

struct http_request {
  std::string method;
  std::string path;
  std::string authorization;  // the Authorization header, "" when absent
  std::string body;
};

struct http_answer {
  int status = 200;
  std::string body;
  std::string content_type = http::k_json_content_type;
  std::vector<std::pair<std::string, std::string>> headers;
};

class evald_service {
 public:
  // `eval` and `log` (may be null: nothing logged) must outlive the service.
  evald_service(evaluator& eval, std::vector<task> tasks, service_options options, request_log* log);
  http_answer handle(const http_request& request) noexcept;
  // The check that needs no body, for the server to make before it reads
  // one: the bearer token (401). The refusal, or nothing when the request may
  // go on to handle().
  std::optional<http_answer> screen(const http_request& head) noexcept;
  // Counts an answer that went out (the server calls it for every one).
  void record_http(const std::string& path, int status) noexcept;
  const service_options& options() const { return m_options; }
  service_metrics& metrics() { return m_metrics; }

 private:
  http_answer route(const http_request& request);
  http_answer evaluate(const http_request& request, bool batch);
  http_answer health() const;
  http_answer tasks(const std::string& path) const;
  bool authorised(const http_request& request) const;
  http_answer unauthorised() const;
  void log_row(const service_request_row& row);

  evaluator& m_eval;
  std::vector<task> m_task_list;
  std::map<std::string, task> m_tasks;
  service_options m_options;
  request_log* m_log;
  service_metrics m_metrics;
  std::unique_ptr<eval_queue> m_queue;
};

// An address of 127.0.0.0/8, ::1 (also as "[::1]"), or the name "localhost";
// no other name (a name can resolve to any address).
bool is_loopback_host(const std::string& host);

}  // namespace ptxbench::service
