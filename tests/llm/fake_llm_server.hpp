#pragma once
// A real HTTP server on 127.0.0.1 (free port) that answers the providers'
// requests from a script, so the tests exercise libcurl, sockets, timeouts and
// broken responses for real. Every request is recorded for inspection.
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::test {

struct received_request {
  std::string path;
  nlohmann::json body;  // null when the body was not JSON
  httplib::Headers headers;
};

// Called for every request; `index` counts requests from 0.
using reply_script = std::function<void(int index, const httplib::Request&, httplib::Response&)>;

class fake_llm_server {
 public:
  explicit fake_llm_server(reply_script script);
  ~fake_llm_server();
  fake_llm_server(const fake_llm_server&) = delete;
  fake_llm_server& operator=(const fake_llm_server&) = delete;

  int port() const { return m_port; }
  std::string origin() const;    // http://127.0.0.1:PORT
  std::string base_url() const;  // http://127.0.0.1:PORT/v1 (OpenAI style)
  std::vector<received_request> requests() const;
  int request_count() const { return m_count.load(); }

 private:
  void handle(const httplib::Request& req, httplib::Response& res);

  reply_script m_script;
  httplib::Server m_server;
  std::thread m_thread;
  int m_port = 0;
  std::atomic<int> m_count{0};
  mutable std::mutex m_mutex;
  std::vector<received_request> m_requests;
};

// An OpenAI chat completion body with the given content and usage.
nlohmann::json openai_body(const std::string& content, const std::string& reasoning_field = "",
                           const std::string& reasoning = "");
void reply_json(httplib::Response& res, const nlohmann::json& body, int status = 200);
// Announces a body of 4096 bytes, sends a few and closes the connection.
void reply_truncated(httplib::Response& res);

}  // namespace ptxbench::test
