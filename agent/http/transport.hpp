#pragma once
// The one place that calls libcurl: a blocking HTTPS POST with a total timeout.
// Internal to agent/llm. Nothing here throws for transport trouble; every
// outcome (status, timeout, refused connection, cut-off body) is a value.
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::llm_detail {

enum class transport_status {
  ok,          // a complete HTTP response arrived (any status code)
  timeout,     // no complete response within the timeout
  connection,  // could not connect, or the connection broke
  truncated,   // the body ended before its announced length
  failed,      // anything else (bad URL, TLS set-up); not worth retrying
  cancelled,   // cancel_llm_calls() aborted the transfer
  too_large,   // the body grew past max_body_bytes
};

constexpr size_t max_body_bytes = size_t(64) << 20;

struct http_response {
  transport_status status = transport_status::failed;
  std::string transport_error;  // curl's explanation when status != ok
  long http_status = 0;
  std::string body;
  std::optional<double> retry_after_s;  // from Retry-After or retry-after-ms, when sent
  std::string request_id;               // the X-Request-Id header, when sent (at most 128 characters)
  double elapsed_ms = 0.0;
};

// Sets up libcurl for the process once (thread-safe, idempotent).
void ensure_curl_initialised();

// One easy handle, reused for every attempt of one call so a kept-alive
// connection can be reused. Not shareable between threads: make one per call.
class http_session {
 public:
  http_session();
  ~http_session();
  http_session(const http_session&) = delete;
  http_session& operator=(const http_session&) = delete;

  // POSTs `body` to `url`; gives up after `timeout_s` in total, or, with
  // idle_timeout (a streamed reply), after `timeout_s` without a byte.
  http_response post(const std::string& url, const std::vector<std::string>& headers,
                     const std::string& body, double timeout_s, bool idle_timeout = false);
  // GETs `url` (the evaluation service's health and task routes).
  http_response get(const std::string& url, const std::vector<std::string>& headers, double timeout_s);

 private:
  http_response perform(const std::string& url, const std::vector<std::string>& headers, const std::string* body,
                        double timeout_s, bool idle_timeout);
  void* m_handle;  // CURL*, kept opaque so curl.h stays inside this folder's .cpp files
};

}  // namespace ptxbench::llm_detail
