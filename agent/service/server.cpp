#include "agent/service/server.hpp"

#include <httplib.h>

#include <stdexcept>

#include "agent/service/content_types.hpp"
#include "agent/service/http_encoding.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::service {

struct evald_server::impl {
  explicit impl(evald_service& s) : service(s) {}
  evald_service& service;
  httplib::Server server;
};

evald_server::evald_server(evald_service& service) : m_impl(std::make_unique<impl>(service)) {
  auto& svc = m_impl->service;
  auto handler = [&svc](const httplib::Request& req, httplib::Response& res) {
    http_request r{req.method, req.path, req.get_header_value("Authorization"), req.body};
    http_answer a = svc.handle(r);
    res.status = a.status;
    for (const auto& [k, v] : a.headers) res.set_header(k, v);
    res.set_content(a.body, a.content_type.c_str());
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
  // requests answered at once (health, metrics, 429s).
  const size_t threads = size_t(o.capacity) + 8;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Each answer goes out as two writes (headers, then body); with Nagle's
  // algorithm the body could wait for the ACK of the headers.
  server.set_tcp_nodelay(true);
  refuse_brotli(server);  // metrics are text: see agent/service/http_encoding.hpp
  server.set_read_timeout(60, 0);
  server.set_write_timeout(60, 0);
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
