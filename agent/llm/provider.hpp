#pragma once
// LLM providers behind one interface, over the HTTP transport of agent/http
// (the only folder that sees libcurl). Transport problems are values
// (completion_outcome), not exceptions: the loop records every failed call
// with its cause.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench {

struct chat_message {
  std::string role;  // system | user | assistant
  std::string content;
};

// Who is asking: lets a replay provider find the recorded answer.
struct turn_key {
  std::string task_id;
  int sample = 0;
  int round = 0;
};

struct completion_request {
  std::vector<chat_message> messages;
  turn_key key;
};

struct completion {
  std::string text;
  std::string reasoning;  // reasoning_content / thinking blocks, when the server returns them
  std::string finish_reason;
  std::string model;      // as reported by the server
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int reasoning_tokens = 0;
  double latency_ms = 0.0;  // of the successful attempt
};

// One failed HTTP attempt (retried or final).
struct call_failure {
  int attempt = 0;
  int http_status = 0;   // 0 when no response (timeout, connection refused)
  std::string cause;     // "HTTP 429 (retry after 2 s)", "timeout after 60 s", "malformed JSON: ..."
  double elapsed_ms = 0.0;
};

struct completion_outcome {
  bool ok = false;
  bool cancelled = false;  // stopped by cancel_llm_calls(); not the endpoint's failure
  completion result;
  std::vector<call_failure> failures;  // every failed attempt, also when the call finally succeeded
  std::string error;                   // when !ok: why the call gave up
};

enum class provider_kind { openai, anthropic, replay, embedded };
const char* to_string(provider_kind k);

struct provider_config {
  provider_kind kind = provider_kind::openai;
  std::string base_url;          // e.g. http://127.0.0.1:8000/v1, https://api.anthropic.com
  std::string model;
  std::string api_key_env;       // name of the environment variable holding the key; never stored
  std::optional<double> temperature;
  std::optional<double> top_p;
  int max_tokens = 8192;
  std::optional<int64_t> seed;
  nlohmann::json extra = nlohmann::json::object();  // passed through into the request body
  double timeout_s = 600;
  int max_retries = 5;
  double backoff_initial_s = 1.0;
  double backoff_max_s = 60.0;
  // Tag names whose inline <tag>...</tag> in the content is reasoning (servers
  // without a reasoning parser return it so); moved to completion::reasoning,
  // never sent back in the history. Empty: content is taken as it is.
  std::vector<std::string> think_tags{"think"};
  // Ask for a server-sent-event stream ("stream": true, also when set in
  // extra): timeout_s then bounds the wait for the next bytes, not the whole
  // reply, so long reasoning replies are not cut by a total timeout.
  bool stream = false;
  // The longest one streamed attempt may run, bytes or not (keep-alive
  // comments and endless text are no silence): a failed attempt, retried.
  // An hour holds 64K tokens at 18 tokens/s.
  double stream_deadline_s = 3600;
  std::string replay_db;         // kind == replay: run database to read answers from
  std::string replay_experiment; // kind == replay: experiment name in it
};

// Parses the "llm" object of a config. Throws input_error naming the path
// (base_url: http:// or https:// only).
provider_config parse_provider_config(const nlohmann::json& j, const std::string& path = "$.llm");
// The config as stored with the experiment: everything but secrets (the key's
// variable name is kept, never its value).
nlohmann::json provider_config_to_json(const provider_config& c);
// `url` with credentials replaced by "REDACTED": the user:password@ part and
// the values of query parameters whose name looks secret (key, token, secret,
// password, auth, signature). What is stored or printed passes through this.
std::string redact_url_credentials(const std::string& url);

// Ctrl-C: aborts every HTTP transfer in flight, the remote evaluator's too
// (agent/http/transport.hpp: within about a second), and makes calls end at
// once as cancelled. Async-signal-safe: one lock-free atomic store.
void cancel_llm_calls();
bool llm_calls_cancelled();
void reset_llm_cancellation();  // lets calls run again (tests)

class provider {
 public:
  virtual ~provider() = default;
  // Thread-safe; many trajectories call it at once.
  virtual completion_outcome complete(const completion_request& request) = 0;
  virtual std::string describe() const = 0;  // "openai http://... model=..."
};

// HTTP providers (openai, anthropic, embedded: the embedded endpoint is openai-compatible).
std::unique_ptr<provider> make_http_provider(const provider_config& c);

// Answers from a lookup function (recorded replies). Returns a failure outcome
// when the function has no answer for the key.
using reply_lookup = std::function<std::optional<completion>(const turn_key&)>;
std::unique_ptr<provider> make_replay_provider(reply_lookup lookup, std::string description);

}  // namespace ptxbench
