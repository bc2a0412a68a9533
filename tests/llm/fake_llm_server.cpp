#include "fake_llm_server.hpp"

#include <chrono>
#include <stdexcept>

#include "wait_until.hpp"

namespace ptxbench::test {

fake_llm_server::fake_llm_server(reply_script script) : m_script(std::move(script)) {
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
  m_server.Post("/v1/chat/completions", handler);
  m_server.Post("/v1/messages", handler);
  m_port = m_server.bind_to_any_port("127.0.0.1");
  if (m_port <= 0) throw std::runtime_error("fake_llm_server: cannot bind 127.0.0.1");
  m_thread = std::thread([this] { m_server.listen_after_bind(); });
  // The socket already listens after bind; wait for the accept loop anyway so
  // that stop() in the destructor cannot race with its start.
  wait_until([this] { return m_server.is_running(); }, std::chrono::seconds(1), std::chrono::milliseconds(2));
}

fake_llm_server::~fake_llm_server() {
  m_server.stop();
  if (m_thread.joinable()) m_thread.join();
}

std::string fake_llm_server::origin() const { return "http://127.0.0.1:" + std::to_string(m_port); }
std::string fake_llm_server::base_url() const { return origin() + "/v1"; }

std::vector<received_request> fake_llm_server::requests() const {
  std::lock_guard lock(m_mutex);
  return m_requests;
}

void fake_llm_server::handle(const httplib::Request& req, httplib::Response& res) {
  int index = m_count.fetch_add(1);
  {
    std::lock_guard lock(m_mutex);
    m_requests.push_back({req.path, nlohmann::json::parse(req.body, nullptr, false), req.headers});
    if (m_requests.back().body.is_discarded()) m_requests.back().body = nullptr;
  }
  m_script(index, req, res);
}

nlohmann::json openai_body(const std::string& content, const std::string& reasoning_field,
                           const std::string& reasoning) {
  nlohmann::json message = {{"role", "assistant"}, {"content", content}};
  if (!reasoning_field.empty()) message[reasoning_field] = reasoning;
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "served-model"},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
          {"usage",
           {{"prompt_tokens", 120},
            {"completion_tokens", 45},
            {"total_tokens", 165},
            {"completion_tokens_details", {{"reasoning_tokens", 30}}}}}};
}

void reply_json(httplib::Response& res, const nlohmann::json& body, int status) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void reply_truncated(httplib::Response& res) {
  res.set_content_provider(4096, "application/json",
                           [](size_t, size_t, httplib::DataSink& sink) {
                             const std::string head = R"({"choices": [{"message": {"content": "tru)";
                             sink.write(head.data(), head.size());
                             return false;  // abandon the body: the server closes the connection
                           });
}

}  // namespace ptxbench::test
