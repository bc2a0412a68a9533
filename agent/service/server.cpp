#include "agent/service/server.hpp"

#include <httplib.h>

#include <cctype>
#include <memory>
#include <stdexcept>

#include "agent/service/content_types.hpp"
#include "agent/service/http_encoding.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::service {

namespace {

constexpr size_t k_threads_beyond_capacity = 64;
constexpr time_t k_idle_s = 10;

// A body that httplib would read whole, whatever its size, before any
// handler runs: set_payload_max_length bounds only a stated Content-Length.
// The methods are those httplib reads a body for (detail::expect_content).
bool length_unknown(const httplib::Request& req) {
  const std::string& m = req.method;
  const bool reads_body = m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE" || m == "PRI";
  return req.has_header("Transfer-Encoding") || (reads_body && !req.has_header("Content-Length"));
}

// At most 128 of [A-Za-z0-9._-]: safe to echo in a header and a log.
bool valid_request_id(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

void answer(const http_answer& a, httplib::Response& res) {
  res.status = a.status;
  for (const auto& [k, v] : a.headers) res.set_header(k, v);
  res.set_content(a.body, a.content_type.c_str());
}

// Answers `a` before the request's body is read, and closes the connection:
// the unread body would otherwise be parsed as the next request. httplib 0.11
// keeps a connection open unless writing an answer fails, so the body comes
// from a provider that writes it whole and then reports a failure.
void answer_and_close(const http_answer& a, const httplib::Request& req, httplib::Response& res) {
  auto& request = const_cast<httplib::Request&>(req);  // httplib's own object, as in refuse_brotli
  request.headers.erase("Connection");
  request.headers.emplace("Connection", "close");  // what the answer's headers then say
  request.ranges.clear();
  res.status = a.status;
  for (const auto& [k, v] : a.headers) res.set_header(k, v);
  auto body = std::make_shared<std::string>(a.body);
  res.set_content_provider(body->size(), a.content_type.c_str(),
                           [body](size_t offset, size_t length, httplib::DataSink& sink) {
                             sink.write(body->data() + offset, length);
                             return false;
                           });
}

}  // namespace

struct evald_server::impl {
  explicit impl(evald_service& s) : service(s) {}
  evald_service& service;
  httplib::Server server;
};

evald_server::evald_server(evald_service& service) : m_impl(std::make_unique<impl>(service)) {
  auto& svc = m_impl->service;
  auto handler = [&svc](const httplib::Request& req, httplib::Response& res) {
    answer(svc.handle({req.method, req.path, req.get_header_value("Authorization"), req.body}), res);
  };
  auto& server = m_impl->server;
  server.Get(".*", handler);
  server.Post(".*", handler);
  server.Put(".*", handler);
  server.Delete(".*", handler);
  const service_options& o = service.options();
  // httplib answers 413 itself past this size, before the body is read whole.
  server.set_payload_max_length(o.max_body_bytes);
  // Handler threads block while their evaluations run: enough for every
  // admitted request (each holds at least one queue place) plus the
  // requests answered at once (health, metrics, 429s), and room for
  // connections that send nothing: each holds a thread until its read times
  // out, and 12 of them took health down when there were 8 to spare.
  const size_t threads = size_t(o.capacity) + k_threads_beyond_capacity;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Each answer goes out as two writes (headers, then body); with Nagle's
  // algorithm the body could wait for the ACK of the headers.
  server.set_tcp_nodelay(true);
  // Metrics are text: see agent/service/http_encoding.hpp. Then the checks
  // that need no body, made before httplib reads one: a client without the
  // token cannot make evald read (or hold) a body.
  refuse_brotli(server, [&svc](const httplib::Request& req, httplib::Response& res) {
    const bool unknown_length = length_unknown(req);
    auto refused = svc.screen({req.method, req.path, req.get_header_value("Authorization"), "", unknown_length});
    if (!refused) return httplib::Server::HandlerResponse::Unhandled;
    const bool body_follows =
        unknown_length || (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    if (body_follows) answer_and_close(*refused, req, res);
    else answer(*refused, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  // Every answer, httplib's own (413, 400) too, carries the client's request
  // id back: a client can tell an answer meant for another request.
  server.set_post_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.get_header_value("X-Request-Id");
    if (valid_request_id(id)) res.set_header("X-Request-Id", id);
  });
  // A client that sends nothing for this long is dropped (a request is sent
  // in one go; 60 s let a client hold a thread with a byte a minute).
  server.set_read_timeout(k_idle_s, 0);
  server.set_write_timeout(60, 0);
  server.set_keep_alive_timeout(k_idle_s);
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content(R"({"error":"internal error","status":500})", k_json_content_type);
  });
}

evald_server::~evald_server() { stop(); }

int evald_server::bind(const std::string& host, int port) {
  if (!is_loopback_host(host) && m_impl->service.options().token.empty())
    throw input_error("evald: listening on " + host +
                      " (not loopback) needs a bearer token: pass --token-env VAR with VAR set");
  auto& s = m_impl->server;
  int bound = port == 0 ? s.bind_to_any_port(host) : (s.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) throw std::runtime_error("evald: cannot listen on " + host + ":" + std::to_string(port));
  return bound;
}

void evald_server::serve() { m_impl->server.listen_after_bind(); }

void evald_server::stop() {
  if (m_impl) m_impl->server.stop();
}

}  // namespace ptxbench::service
