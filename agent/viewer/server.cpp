#include "agent/viewer/server.hpp"

#include "agent/http/server.hpp"
#include "agent/viewer/app.hpp"

namespace ptxbench::viewer {

namespace {

http::server_options viewer_options() {
  http::server_options o;
  o.name = "viewer";
  // A browser opens a few connections and keeps them; more threads than a
  // few dozen slow clients take, and short waits for an idle or slow one.
  o.limits.threads = 128;
  o.limits.idle_s = 2;
  o.limits.head_s = 5;
  o.limits.body_s = 5;
  o.limits.max_body_bytes = 64 * 1024;  // read-only: no request has a body worth reading
  o.limits.max_requests_per_connection = 50;
  o.default_headers = {
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
  };
  o.error_answer = [](int status, const std::string& message) {
    return http::response{status, message + "\n", "text/plain; charset=utf-8", {}};
  };
  return o;
}

}  // namespace

struct viewer_server::impl {
  explicit impl(run_store& store)
      : app(store), server(viewer_options(), [this](const http::request& r) { return answer(r); }) {}

  http::response answer(const http::request& r) {
    if (r.method != "GET" && r.method != "HEAD")
      return {405, "the viewer is read-only: use GET\n", "text/plain; charset=utf-8", {{"Allow", "GET, HEAD"}}};
    http_response page = app.get(r.path);
    return {page.status, std::move(page.body), std::move(page.content_type), {}};
  }

  viewer_app app;
  http::server server;
};

viewer_server::viewer_server(run_store& store) : m_impl(std::make_unique<impl>(store)) {}

viewer_server::~viewer_server() { stop(); }

int viewer_server::bind(const std::string& host, int port) { return m_impl->server.bind(host, port); }

void viewer_server::serve() { m_impl->server.serve(); }

void viewer_server::stop() {
  if (m_impl) m_impl->server.stop();
}

}  // namespace ptxbench::viewer
