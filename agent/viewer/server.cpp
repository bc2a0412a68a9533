#include "agent/viewer/server.hpp"

#include <httplib.h>

#include <stdexcept>

#include "agent/service/http_encoding.hpp"
#include "agent/viewer/app.hpp"

namespace ptxbench::viewer {

namespace {
// cpp-httplib gives each connection a pool thread for as long as it stays
// open, and by default has max(8, cores - 1) threads and waits 5 s on an idle
// socket: 60 idle TCP connections kept every request waiting for a minute.
// More threads and short idle waits keep the viewer answering.
constexpr size_t k_threads = 64;
constexpr time_t k_idle_s = 2;
constexpr size_t k_keep_alive_requests = 50;
}  // namespace

struct viewer_server::impl {
  explicit impl(run_store& store) : app(store) {}
  viewer_app app;
  httplib::Server server;
};

viewer_server::viewer_server(run_store& store) : m_impl(std::make_unique<impl>(store)) {
  auto& app = m_impl->app;
  auto handler = [&app](const httplib::Request& request, httplib::Response& response) {
    auto r = app.get(request.path);
    response.status = r.status;
    response.set_content(r.body, r.content_type.c_str());
  };
  m_impl->server.Get(".*", handler);
  m_impl->server.new_task_queue = [] { return new httplib::ThreadPool(k_threads); };
  m_impl->server.set_tcp_nodelay(true);  // answers go out as headers then body (see agent/service/server.cpp)
  refuse_brotli(m_impl->server);  // pages of 0.5 MB and more: see agent/service/http_encoding.hpp
  m_impl->server.set_read_timeout(k_idle_s, 0);
  m_impl->server.set_write_timeout(k_idle_s, 0);
  m_impl->server.set_keep_alive_timeout(k_idle_s);
  m_impl->server.set_keep_alive_max_count(k_keep_alive_requests);
  m_impl->server.set_default_headers({
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
  });
  // Anything escaping the app (it should not) still becomes a 500, never a crash.
  m_impl->server.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    response.status = 500;
    response.set_content("internal error", "text/plain");
  });
}

viewer_server::~viewer_server() { stop(); }

int viewer_server::bind(const std::string& host, int port) {
  int bound = port == 0 ? m_impl->server.bind_to_any_port(host) : (m_impl->server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port));
  return bound;
}

void viewer_server::serve() { m_impl->server.listen_after_bind(); }

void viewer_server::stop() {
  if (m_impl) m_impl->server.stop();
}

}  // namespace ptxbench::viewer
