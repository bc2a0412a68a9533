#include "agent/endpoint/embedded_endpoint.hpp"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "agent/service/content_types.hpp"
#include "agent/service/http_encoding.hpp"
#include "evaluator/api/files.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench {

namespace {

// A file a reply names; a missing one is reported at the reply's JSON path.
std::string read_file(const std::filesystem::path& p, const json_reader& where) {
  try {
    return read_text_file(p);
  } catch (const input_error&) {
    where.fail("cannot read file " + p.string());
  }
}

// A fenced block as a model writes it: the body always ends with a newline.
std::string fenced(const std::string& language, const std::string& body) {
  return "```" + language + "\n" + body + (body.empty() || body.back() != '\n' ? "\n" : "") + "```\n";
}

scripted_reply parse_reply(const json_reader& r, const std::filesystem::path& base) {
  scripted_reply out;
  if (r.json().is_string()) {
    out.text = r.json().get<std::string>();
    return out;
  }
  r.expect_object();
  r.reject_unknown({"text", "ptx", "manifest", "reasoning"});
  out.text = r.get_string("text", "");
  out.reasoning = r.get_string("reasoning", "");
  if (r.has("ptx")) out.text += "\n\n" + fenced("ptx", read_file(base / r.get_string("ptx"), r.at("ptx")));
  if (r.has("manifest"))
    out.text += "\n" + fenced("json", read_file(base / r.get_string("manifest"), r.at("manifest")));
  return out;
}

}  // namespace

endpoint_script load_endpoint_script(const std::filesystem::path& path) {
  const nlohmann::json j = read_json_file(path, "endpoint script");
  json_reader r(j, "$", path.string());
  r.reject_unknown({"tasks", "latency_ms"});
  endpoint_script s;
  s.latency_ms = r.get_number("latency_ms", 0.0);
  auto tasks = r.at("tasks");
  tasks.expect_object();
  auto base = path.parent_path();
  for (auto it = tasks.json().begin(); it != tasks.json().end(); ++it) {
    auto rounds = tasks.at(it.key());
    rounds.expect_array();
    std::vector<std::vector<scripted_reply>> parsed;
    for (size_t i = 0; i < rounds.json().size(); ++i) {
      auto variants = rounds.at(i);
      std::vector<scripted_reply> v;
      if (variants.json().is_array()) {
        for (size_t k = 0; k < variants.json().size(); ++k) v.push_back(parse_reply(variants.at(k), base));
      } else {
        v.push_back(parse_reply(variants, base));
      }
      if (v.empty()) variants.fail("a round needs at least one reply");
      parsed.push_back(v);
    }
    if (parsed.empty()) rounds.fail("a task needs at least one round");
    s.tasks[it.key()] = parsed;
  }
  return s;
}

struct embedded_endpoint::impl {
  endpoint_script script;
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::atomic<double> latency_ms{0.0};
  std::atomic<int> served{0};
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::mutex mutex;
  std::map<std::pair<std::string, int>, int> counters;

  // Picks the scripted reply for a request; returns false with a message when none fits.
  bool pick(const nlohmann::json& messages, scripted_reply* out, std::string* error) {
    static const std::regex task_re("Task id: ([A-Za-z0-9_]+)");
    static const std::regex round_re("Feedback on round ([0-9]+)");
    std::string task_id;
    int assistants = 0;
    std::string last_user;
    for (const auto& m : messages) {
      std::string role = m.value("role", "");
      std::string content = m.contains("content") && m["content"].is_string() ? m["content"].get<std::string>() : "";
      std::smatch match;
      if (role == "user" && task_id.empty() && std::regex_search(content, match, task_re)) task_id = match[1];
      if (role == "assistant") ++assistants;
      if (role == "user") last_user = content;
    }
    int round = assistants;
    std::smatch match;
    if (std::regex_search(last_user, match, round_re)) round = std::stoi(match[1]) + 1;
    auto it = script.tasks.find(task_id);
    if (it == script.tasks.end()) it = script.tasks.find("*");
    if (it == script.tasks.end()) {
      *error = "no scripted replies for task '" + task_id + "'";
      return false;
    }
    const auto& rounds = it->second;
    const auto& variants = rounds[std::min<size_t>(round, rounds.size() - 1)];
    std::lock_guard<std::mutex> lock(mutex);
    int n = counters[{task_id, round}]++;
    *out = variants[n % variants.size()];
    return true;
  }

  void handle(const httplib::Request& req, httplib::Response& res) {
    try {
      auto body = nlohmann::json::parse(req.body);
      scripted_reply reply;
      std::string error;
      if (!body.contains("messages") || !body["messages"].is_array()) {
        res.status = 400;
        res.set_content(R"({"error":{"message":"messages must be an array"}})", k_json_content_type);
        return;
      }
      if (!pick(body["messages"], &reply, &error)) {
        res.status = 404;
        res.set_content(nlohmann::json{{"error", {{"message", error}}}}.dump(), k_json_content_type);
        return;
      }
      int now = ++in_flight;
      for (int seen = max_in_flight.load(); now > seen && !max_in_flight.compare_exchange_weak(seen, now);) {
      }
      double delay = latency_ms.load();
      // In slices, so that stop() (the run ending on Ctrl-C) never waits out a long delay.
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(delay);
      while (delay > 0 && !stopping.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      --in_flight;
      int prompt_chars = 0;
      for (const auto& m : body["messages"])
        if (m.contains("content") && m["content"].is_string()) prompt_chars += m["content"].get<std::string>().size();
      nlohmann::json message{{"role", "assistant"}, {"content", reply.text}};
      if (!reply.reasoning.empty()) message["reasoning_content"] = reply.reasoning;
      nlohmann::json out{
          {"id", "embedded-" + std::to_string(served.load())},
          {"object", "chat.completion"},
          {"model", body.value("model", "embedded-script")},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
          {"usage",
           {{"prompt_tokens", prompt_chars / 4},
            {"completion_tokens", static_cast<int>(reply.text.size() / 4)},
            {"total_tokens", prompt_chars / 4 + static_cast<int>(reply.text.size() / 4)}}}};
      ++served;
      res.set_content(out.dump(), k_json_content_type);
    } catch (const std::exception& e) {
      res.status = 400;
      res.set_content(nlohmann::json{{"error", {{"message", std::string("bad request: ") + e.what()}}}}.dump(),
                      k_json_content_type);
    }
  }
};

embedded_endpoint::embedded_endpoint(endpoint_script script, int port) : m_impl(std::make_unique<impl>()) {
  m_impl->script = std::move(script);
  m_impl->latency_ms = m_impl->script.latency_ms;
  m_impl->server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  m_impl->server.set_tcp_nodelay(true);  // answers go out as headers then body (see agent/service/server.cpp)
  refuse_brotli(m_impl->server);  // see agent/service/http_encoding.hpp
  m_impl->server.Post("/v1/chat/completions",
                      [this](const httplib::Request& q, httplib::Response& r) { m_impl->handle(q, r); });
  m_impl->server.Get("/v1/models", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(R"({"object":"list","data":[{"id":"embedded-script","object":"model"}]})", k_json_content_type);
  });
  if (port == 0) {
    m_impl->port = m_impl->server.bind_to_any_port("127.0.0.1");
  } else {
    m_impl->port = m_impl->server.bind_to_port("127.0.0.1", port) ? port : -1;
  }
  if (m_impl->port <= 0) throw std::runtime_error("embedded endpoint: cannot listen on 127.0.0.1");
  m_impl->thread = std::thread([this] { m_impl->server.listen_after_bind(); });
  // The socket already listens after bind; wait for the accept loop too.
  for (int i = 0; i < 500 && !m_impl->server.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

embedded_endpoint::~embedded_endpoint() { stop(); }

void embedded_endpoint::stop() {
  if (m_impl && m_impl->thread.joinable()) {
    m_impl->stopping = true;
    m_impl->server.stop();
    m_impl->thread.join();
  }
}

std::string embedded_endpoint::base_url() const { return "http://127.0.0.1:" + std::to_string(m_impl->port) + "/v1"; }
int embedded_endpoint::port() const { return m_impl->port; }
void embedded_endpoint::set_latency_ms(double ms) { m_impl->latency_ms = ms; }
int embedded_endpoint::requests_served() const { return m_impl->served.load(); }
int embedded_endpoint::max_in_flight() const { return m_impl->max_in_flight.load(); }

}  // namespace ptxbench
