// The HTTP providers: build the request once, then attempt it until a usable
// reply arrives, a failure that will not go away occurs, or the retries run
// out. Every failed attempt is recorded with its cause.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "agent/http/transport.hpp"
#include "agent/llm/retry_policy.hpp"
#include "agent/llm/wire_format.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench {

namespace llm_detail {
std::string default_base_url(provider_kind kind);                              // provider_config.cpp
void check_base_url(const std::string& url, const std::string& path);       // provider_config.cpp
}  // namespace llm_detail

void cancel_llm_calls() { http::cancel_transfers(); }
bool llm_calls_cancelled() { return http::transfers_cancelled(); }
void reset_llm_cancellation() { http::reset_transfer_cancellation(); }

namespace {
using namespace llm_detail;
using http::http_response;
using http::http_session;
using http::max_body_bytes;
using http::transport_status;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// What one attempt came to when it did not give a completion.
struct attempt_failure {
  std::string cause;
  bool retryable = false;
  std::optional<double> retry_after_s;
};

attempt_failure describe_failure(const http_response& r, const http::transfer_limits& limits) {
  switch (r.status) {
    case transport_status::timeout:
      return {"timeout after " + seconds_text(limits.timeout_s) + " s" + (limits.stream ? " without a byte" : ""),
              true, {}};
    case transport_status::deadline:
      return {"the stream still ran at its deadline of " + seconds_text(limits.deadline_s) + " s (stream_deadline_s)",
              true, {}};
    case transport_status::connection: return {"connection error: " + r.transport_error, true, {}};
    case transport_status::truncated: return {"truncated body (" + r.transport_error + ")", true, {}};
    case transport_status::failed: return {"transport error: " + r.transport_error, false, {}};
    case transport_status::cancelled: return {"cancelled", false, {}};
    case transport_status::too_large:
      return {"reply body larger than " + std::to_string(max_body_bytes >> 20) + " MiB", false, {}};
    case transport_status::ok: break;
  }
  std::string cause = "HTTP " + std::to_string(r.http_status);
  if (r.retry_after_s) cause += " (Retry-After " + number_text(*r.retry_after_s) + " s)";
  std::string message = error_message_of(r.body);
  if (!message.empty()) cause += ": " + message;
  return {cause, is_retryable_status(r.http_status), r.retry_after_s};
}

completion_outcome cancelled(completion_outcome out) {
  out.ok = false;
  out.cancelled = true;
  out.error = "cancelled (interrupted)";
  return out;
}

// A streamed reply when the body is an event stream; a server may also ignore
// "stream" and answer with one JSON object.
reply_parse parse(const std::string& body, bool anthropic) {
  if (looks_like_event_stream(body)) return anthropic ? anthropic_parse_stream(body) : openai_parse_stream(body);
  return anthropic ? anthropic_parse_reply(body) : openai_parse_reply(body);
}

class http_provider final : public provider {
 public:
  http_provider(provider_config c, std::string api_key)
      : m_config(std::move(c)), m_api_key(std::move(api_key)) {}

  completion_outcome complete(const completion_request& request) override {
    const bool anthropic = m_config.kind == provider_kind::anthropic;
    const wire_request wire = anthropic ? anthropic_request(m_config, m_api_key, request.messages)
                                        : openai_request(m_config, m_api_key, request.messages);
    completion_outcome out;
    http_session session;
    const http::transfer_limits limits{m_config.timeout_s, wants_stream(m_config), m_config.stream_deadline_s};
    const int attempts = 1 + std::max(0, m_config.max_retries);
    for (int attempt = 1;; ++attempt) {
      if (llm_calls_cancelled()) return cancelled(std::move(out));
      http_response response = session.post(wire.url, wire.headers, wire.body, limits);
      if (response.status == transport_status::cancelled) return cancelled(std::move(out));
      attempt_failure failure;
      if (response.status == transport_status::ok && response.http_status / 100 == 2) {
        reply_parse reply = parse(response.body, anthropic);
        if (reply.ok) {
          split_inline_reasoning(reply.result, m_config.think_tags);
          out.ok = true;
          out.result = std::move(reply.result);
          out.result.latency_ms = response.elapsed_ms;
          if (out.result.model.empty()) out.result.model = m_config.model;
          return out;
        }
        failure = {reply.cause, true, {}};
      } else {
        failure = describe_failure(response, limits);
      }
      out.failures.push_back(
          {attempt, static_cast<int>(response.http_status), failure.cause, response.elapsed_ms});
      if (!failure.retryable) {
        out.error = failure.cause;
        return out;
      }
      if (attempt >= attempts) {
        out.error = "gave up after " + std::to_string(attempt) + " attempts; last: " + failure.cause;
        return out;
      }
      double wait_s = failure.retry_after_s
                          ? std::min(*failure.retry_after_s, m_config.backoff_max_s)
                          : backoff_delay_s(attempt - 1, m_config.backoff_initial_s,
                                            m_config.backoff_max_s, unit_random());
      // In slices, so Ctrl-C never waits out a backoff.
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
      while (std::chrono::steady_clock::now() < until && !llm_calls_cancelled())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string describe() const override {
    return std::string(to_string(m_config.kind)) + " " + redact_url_credentials(m_config.base_url) +
           " model=" + m_config.model;
  }

 private:
  const provider_config m_config;
  const std::string m_api_key;  // read from the environment once; never written anywhere
};
}  // namespace

std::unique_ptr<provider> make_http_provider(const provider_config& c) {
  if (c.kind == provider_kind::replay)
    throw input_error("$.llm.kind: a replay provider is made with make_replay_provider");
  provider_config config = c;
  if (config.base_url.empty()) config.base_url = default_base_url(config.kind);
  if (config.base_url.empty())
    throw input_error("$.llm.base_url: missing (the " + std::string(to_string(config.kind)) +
                      " provider has no default)");
  check_base_url(config.base_url, "$.llm.base_url");
  std::string api_key;
  if (!config.api_key_env.empty()) {
    const char* value = std::getenv(config.api_key_env.c_str());
    if (!value || !*value)
      throw input_error("$.llm.api_key_env: environment variable " + config.api_key_env +
                        " is not set (it should hold the API key)");
    api_key = value;
  }
  http::ensure_curl_initialised();
  return std::make_unique<http_provider>(std::move(config), std::move(api_key));
}

}  // namespace ptxbench
