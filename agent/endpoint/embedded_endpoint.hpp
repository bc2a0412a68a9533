#pragma once
// The embedded endpoint: an OpenAI-compatible chat-completions server on
// 127.0.0.1 that plays scripted replies, so the whole loop runs with no model
// (the demo, tests, the overlap benchmark), behind agent/http's server.
//
// Which reply: the task is the "Task id: <id>" line of the prompt; the round is
// N+1 when the last user message holds "Feedback on round N", else the number
// of assistant messages. The n-th request for one (task, round) gets variant
// n mod (number of variants), so samples of one task can differ.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ptxbench {

struct scripted_reply {
  std::string text;
  std::string reasoning;
};

struct endpoint_script {
  // task id ("*" for any task) -> rounds -> variants
  std::map<std::string, std::vector<std::vector<scripted_reply>>> tasks;
  double latency_ms = 0.0;
};

// Loads a script. A reply is a string, or an object {"text", "ptx", "manifest",
// "reasoning"} where ptx and manifest are files (relative to the script) that
// are appended as ```ptx and ```json blocks. Throws input_error with the JSON path.
endpoint_script load_endpoint_script(const std::filesystem::path& path);

class embedded_endpoint {
 public:
  // Starts serving on 127.0.0.1 at a free port (or `port` when non-zero).
  // Throws input_error when it cannot listen (a port another process listens on).
  explicit embedded_endpoint(endpoint_script script, int port = 0);
  ~embedded_endpoint();
  embedded_endpoint(const embedded_endpoint&) = delete;
  embedded_endpoint& operator=(const embedded_endpoint&) = delete;

  std::string base_url() const;  // http://127.0.0.1:PORT/v1
  int port() const;
  void set_latency_ms(double ms);
  int requests_served() const;
  // The most requests that were being answered at one moment (overlap evidence).
  int max_in_flight() const;
  void stop();

 private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

}  // namespace ptxbench
