#pragma once
// The one place that calls libcurl: blocking HTTP(S) requests whose every
// outcome (status, timeout, refused connection, cut-off body) is a value;
// nothing here throws for transport trouble. Only http:// and https:// are
// spoken, also across redirects (libcurl would read file://, dict://, gopher://
// ... as happily). Used by the LLM providers (agent/llm) and the remote
// evaluator (remote_evaluator.hpp).
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::http {

enum class transport_status {
  ok,          // a complete HTTP response arrived (any status code)
  timeout,     // no complete response within the timeout, or silence past the idle timeout
  deadline,    // a streamed response still going at its deadline
  connection,  // could not connect, or the connection broke
  truncated,   // the body ended before its announced length
  failed,      // anything else (bad URL, a scheme other than http(s), TLS set-up); not worth retrying
  cancelled,   // cancel_transfers() aborted the transfer
  too_large,   // the body grew past max_body_bytes
};

constexpr size_t max_body_bytes = size_t(64) << 20;

// How long one transfer may take.
struct transfer_limits {
  double timeout_s = 60;  // the whole transfer; with `stream`, the longest silence
  bool stream = false;    // a response that may run long as long as bytes keep coming
  double deadline_s = 0;  // with `stream`: the whole transfer at most this long (0: no bound)
};

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

// Ctrl-C: aborts every transfer in flight (libcurl's progress callback checks
// the flag, so within about a second) and makes new ones end at once as
// cancelled. Async-signal-safe: one lock-free atomic store.
void cancel_transfers();
bool transfers_cancelled();
void reset_transfer_cancellation();  // lets transfers run again (tests)

// One easy handle, reused for every attempt of one call so a kept-alive
// connection can be reused. Not shareable between threads: make one per call.
class http_session {
 public:
  http_session();
  ~http_session();
  http_session(const http_session&) = delete;
  http_session& operator=(const http_session&) = delete;

  // POSTs `body` to `url`.
  http_response post(const std::string& url, const std::vector<std::string>& headers, const std::string& body,
                     const transfer_limits& limits);
  // GETs `url` (the evaluation service's health and task routes).
  http_response get(const std::string& url, const std::vector<std::string>& headers, double timeout_s);

 private:
  http_response perform(const std::string& url, const std::vector<std::string>& headers, const std::string* body,
                        const transfer_limits& limits);
  void* m_handle;  // CURL*, kept opaque so curl.h stays inside transport.cpp
};

}  // namespace ptxbench::http
