#include "agent/service/server.hpp"

#include "agent/http/server.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::service {
namespace {

// Handler threads block while their evaluations run: enough for every
// admitted request (each holds at least one queue place) plus the requests
// answered at once (health, metrics, 429s) and clients still sending their
// request, each held at most for the deadlines below.
constexpr size_t k_threads_beyond_capacity = 128;

http::response to_http(http_answer a) { return {a.status, std::move(a.body), std::move(a.content_type), a.headers}; }

http::server_options server_options_for(const service_options& o) {
  http::server_options s;
  s.name = "evald";
  http::limits& l = s.limits;
  l.threads = size_t(o.capacity) + k_threads_beyond_capacity;
  l.listen_backlog = int(l.threads) * 4;
  // A connection that sends nothing is dropped after 10 s; a request's head
  // must be in 10 s after its first byte, its body 30 s after the head plus
  // 1 s per 64 KiB (a 64 MiB batch over a slow link is fine, a trickle not).
  l.idle_s = 10;
  l.head_s = 10;
  l.body_s = 30;
  l.write_s = 60;  // an answer (a batch's results) the client must take at 64 KiB/s
  l.max_body_bytes = o.max_body_bytes;
  return s;
}

}  // namespace

struct evald_server::impl {
  impl(evald_service& svc)
      : server(server_options_for(svc.options()),
               [&svc](const http::request& r) {
                 return to_http(svc.handle({r.method, r.path, r.header("Authorization"), r.body}));
               },
               [&svc](const http::request& head) -> std::optional<http::response> {
                 auto refused = svc.screen({head.method, head.path, head.header("Authorization"), ""});
                 if (!refused) return std::nullopt;
                 return to_http(std::move(*refused));
               },
               [&svc](const http::request& head, int status) { svc.record_http(head.path, status); }),
        service(svc) {}
  http::server server;
  evald_service& service;
};

evald_server::evald_server(evald_service& service) : m_impl(std::make_unique<impl>(service)) {}

evald_server::~evald_server() { stop(); }

int evald_server::bind(const std::string& host, int port) {
  if (!is_loopback_host(host) && m_impl->service.options().token.empty())
    throw input_error("evald: listening on " + host +
                      " (not loopback) needs a bearer token: pass --token-env VAR with VAR set");
  return m_impl->server.bind(host, port);
}

void evald_server::serve() { m_impl->server.serve(); }

void evald_server::stop() {
  if (m_impl) m_impl->server.stop();
}

}  // namespace ptxbench::service
