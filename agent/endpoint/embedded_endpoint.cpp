#include "agent/endpoint/embedded_endpoint.hpp"

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "agent/http/server.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/common/utf8.hpp"

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

namespace {

// An answer in the OpenAI error format: {"error": {"message": ...}}.
http::response error_response(int status, const std::string& message) {
  return {status, json_text(nlohmann::json{{"error", {{"message", message}}}}), http::k_json_content_type, {}};
}

http::server_options endpoint_options() {
  http::server_options o;
  o.name = "embedded endpoint";
  o.limits.max_body_bytes = 64 << 20;  // a long conversation's prompt
  o.error_answer = error_response;
  return o;
}

}  // namespace

struct embedded_endpoint::impl {
  explicit impl(endpoint_script s)
      : script(std::move(s)), server(endpoint_options(), [this](const http::request& r) { return route(r); }) {}

  endpoint_script script;
  http::server server;
  std::thread thread;
  int port = 0;
  std::atomic<double> latency_ms{0.0};
  std::atomic<int> served{0};
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::mutex mutex;
  std::map<std::pair<std::string, int>, int> counters;

  http::response route(const http::request& r) {
    if (r.path == "/v1/chat/completions")
      return r.method == "POST" ? complete(r.body) : error_response(405, "use POST for " + r.path);
    if (r.path == "/v1/models")
      return {200, R"({"object":"list","data":[{"id":"embedded-script","object":"model"}]})",
              http::k_json_content_type, {}};
    return error_response(404, "no route " + utf8_shortened(r.path, 100));
  }

  // Picks the scripted reply for a request; returns false with a message when none fits.
  bool pick(const nlohmann::json& messages, scripted_reply* out, std::string* error) {
    static const std::regex task_re("Task id: ([A-Za-z0-9_]+)");
    static const std::regex round_re("Feedback on round ([0-9]+)");
    std::string task_id;
    int assistants = 0;
    std::string last_user;
    for (const auto& m : messages) {
      if (!m.is_object()) continue;
      const std::string role = m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>() : "";
      std::string content = m.contains("content") && m["content"].is_string() ? m["content"].get<std::string>() : "";
      std::smatch match;
      if (role == "user" && task_id.empty() && std::regex_search(content, match, task_re)) task_id = match[1];
      if (role == "assistant") ++assistants;
      if (role == "user") last_user = content;
    }
    int round = assistants;
    std::smatch match;
    if (std::regex_search(last_user, match, round_re)) round = int(std::min<long long>(std::stoll(match[1]), 1 << 20)) + 1;
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

  void wait_latency() {
    const int now = ++in_flight;
    for (int seen = max_in_flight.load(); now > seen && !max_in_flight.compare_exchange_weak(seen, now);) {
    }
    const double delay = latency_ms.load();
    // In slices, so that stop() (the run ending on Ctrl-C) never waits out a long delay.
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(delay);
    while (delay > 0 && !stopping.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    --in_flight;
  }

  http::response complete(const std::string& text) {
    json_parse_outcome parsed = try_parse_json_bounded(text);
    if (!parsed.ok) return error_response(400, "bad request: " + parsed.message());
    const nlohmann::json& body = parsed.value;
    if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array())
      return error_response(400, "messages must be an array");
    scripted_reply reply;
    std::string error;
    if (!pick(body["messages"], &reply, &error)) return error_response(404, error);
    wait_latency();
    size_t prompt_chars = 0;
    for (const auto& m : body["messages"])
      if (m.is_object() && m.contains("content") && m["content"].is_string())
        prompt_chars += m["content"].get_ref<const std::string&>().size();
    nlohmann::json message{{"role", "assistant"}, {"content", reply.text}};
    if (!reply.reasoning.empty()) message["reasoning_content"] = reply.reasoning;
    const bool named = body.contains("model") && body["model"].is_string();
    const int prompt_tokens = int(std::min<size_t>(prompt_chars / 4, 1 << 30));
    const int completion_tokens = int(reply.text.size() / 4);
    nlohmann::json out{
        {"id", "embedded-" + std::to_string(served.load())},
        {"object", "chat.completion"},
        {"model", named ? body["model"].get<std::string>() : "embedded-script"},
        {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
        {"usage",
         {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}}}};
    ++served;
    return {200, json_text(out), http::k_json_content_type, {}};
  }
};

embedded_endpoint::embedded_endpoint(endpoint_script script, int port)
    : m_impl(std::make_unique<impl>(std::move(script))) {
  m_impl->latency_ms = m_impl->script.latency_ms;
  m_impl->port = m_impl->server.bind("127.0.0.1", port);
  m_impl->thread = std::thread([this] { m_impl->server.serve(); });
  // The socket already listens after bind; wait for the accept loop too.
  for (int i = 0; i < 500 && !m_impl->server.serving(); ++i)
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
