// cpp-httplib 0.11 (Debian's shared library) behind server.hpp: the only file
// of the project that sees its server. httplib keeps the parsing of requests
// and the writing of answers; this file takes over the listening socket
// (listener.hpp), each connection's reads and writes (connection_io.hpp,
// through an httplib::Stream of its own, as httplib's SSL server does), and
// the decisions made before a body is read.
#include "agent/http/server.hpp"

#include <fcntl.h>
#include <httplib.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "agent/http/connection_io.hpp"
#include "agent/http/listener.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench::http {
namespace {

// What the server knows of the request its thread is serving: httplib's
// handlers get no handle on the connection, and one thread serves a
// connection from accept to close.
struct request_state {
  connection_io& io;
  bool screened = false;              // the head went through screen and framing
  std::optional<response> refusal;    // ... and was refused there
  bool close_after = false;           // the connection ends with this answer
};
thread_local request_state* t_request = nullptr;

class deadline_stream final : public httplib::Stream {
 public:
  explicit deadline_stream(connection_io& io) : m_io(io) {}
  bool is_readable() const override { return m_io.readable(); }
  bool is_writable() const override { return m_io.writable(); }
  ssize_t read(char* out, size_t size) override { return m_io.read(out, size); }
  ssize_t write(const char* data, size_t size) override { return m_io.write(data, size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { m_io.address(true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { m_io.address(false, ip, port); }
  ::socket_t socket() const override { return m_io.fd(); }

 private:
  connection_io& m_io;
};

response json_error(int status, const std::string& message) {
  response r;
  r.status = status;
  r.body = json_text(nlohmann::json{{"error", message}, {"status", status}});
  return r;
}

std::string status_text(int status) {
  switch (status) {
    case 400: return "malformed request";
    case 404: return "not found";
    case 405: return "method not allowed";
    case 413: return "request body too large";
    case 414: return "request line too long";
    case 416: return "range not satisfiable";
    case 500: return "internal error";
    default: return "HTTP " + std::to_string(status);
  }
}

request head_of(const httplib::Request& req, bool with_body) {
  request r{req.method, req.path, {}, with_body ? req.body : std::string()};
  for (const auto& [k, v] : req.headers) r.headers.emplace_back(k, v);
  return r;
}

void put(const response& a, httplib::Response& res) {
  res.status = a.status;
  for (const auto& [k, v] : a.headers) res.set_header(k, v);
  res.set_content(a.body, a.content_type.c_str());
}

// cpp-httplib compresses with brotli at its slowest quality when a client
// offers br (browsers, libcurl and Python's requests with brotli do): 0.68 s
// for a 548 KB trajectory page of the viewer against 41 ms with gzip, 26 ms
// for a 12 KB evaluation result. With br dropped from the request's
// Accept-Encoding httplib answers with gzip when offered, else as it is.
// httplib hands its handlers its own, non-const request object: the rewritten
// header is what its later choice of encoding reads.
void drop_brotli(const httplib::Request& req) {
  auto& request = const_cast<httplib::Request&>(req);
  auto range = request.headers.equal_range("Accept-Encoding");
  std::string offered;
  for (auto it = range.first; it != range.second; ++it) offered += (offered.empty() ? "" : ", ") + it->second;
  if (offered.empty()) return;
  request.headers.erase(range.first, range.second);
  if (const std::string kept = without_brotli(offered); !kept.empty()) request.headers.emplace("Accept-Encoding", kept);
}

// The answer says "Connection: close" (httplib writes it when the request
// says so) and the connection ends after it: a body left unread would be
// taken for the next request.
void close_after(const httplib::Request& req) {
  auto& request = const_cast<httplib::Request&>(req);
  request.headers.erase("Connection");
  request.headers.emplace("Connection", "close");
  if (t_request) t_request->close_after = true;
}

bool reads_body(const std::string& method) {  // the methods httplib reads a body for (detail::expect_content)
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE" || method == "PRI";
}

// Bytes of a body follow the head (or httplib would wait for them): an answer
// given before they are read must close the connection.
bool body_follows(const httplib::Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  if (!req.has_header("Content-Length")) return reads_body(req.method);
  return req.get_header_value("Content-Length") != "0";
}

// Reads and discards what a refused client still sends, for at most 1 s and
// 1 MiB, before the close: closing with unread bytes sends a reset, which can
// overtake the answer on its way.
void linger(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  char sink[16384];
  for (size_t drained = 0; drained < (1u << 20);) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) return;
    const ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n <= 0) return;
    drained += size_t(n);
  }
}

}  // namespace

struct server::impl final : public httplib::Server {
  impl(server_options o, handler h, screen s, observer w)
      : options(std::move(o)), respond(std::move(h)), check(std::move(s)), observe(std::move(w)) {
    if (!options.error_answer) options.error_answer = json_error;
    const limits& l = options.limits;
    deadlines = {l.idle_s, l.head_s, l.body_s, l.write_s, l.min_bytes_per_s, l.max_head_bytes};
    install();
  }

  void install();
  std::optional<response> screen_head(const httplib::Request& req);
  std::optional<response> framing(const httplib::Request& req) const;
  void add_failure_reason(httplib::Response& res) const;
  bool process_and_close_socket(::socket_t sock) override;
  void adopt(int fd) { svr_sock_ = fd; }
  int release_listener() { return svr_sock_.exchange(INVALID_SOCKET); }

  server_options options;
  handler respond;
  screen check;
  observer observe;
  io_deadlines deadlines;
  std::atomic<bool> stopping{false};
  bool bound = false;
};

void server::impl::install() {
  const limits& l = options.limits;
  new_task_queue = [threads = l.threads] { return new httplib::ThreadPool(threads); };
  set_payload_max_length(l.max_body_bytes);  // checked before the body already (framing); a second line
  set_keep_alive_max_count(l.max_requests_per_connection);
  set_keep_alive_timeout(time_t(l.idle_s + 0.999));  // what the Keep-Alive header announces
  set_default_headers(httplib::Headers(options.default_headers.begin(), options.default_headers.end()));
  auto dispatch = [this](const httplib::Request& req, httplib::Response& res) { put(respond(head_of(req, true)), res); };
  Get(".*", dispatch);
  Post(".*", dispatch);
  Put(".*", dispatch);
  Patch(".*", dispatch);
  Delete(".*", dispatch);
  Options(".*", dispatch);
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    drop_brotli(req);
    const std::optional<response> refusal = screen_head(req);
    if (!refusal) return HandlerResponse::Unhandled;
    put(*refusal, res);
    if (body_follows(req)) close_after(req);
    return HandlerResponse::Handled;
  });
  // A client that waits for "100 Continue" is refused before it sends its body.
  set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    const std::optional<response> refusal = screen_head(req);
    if (!refusal) return 100;
    put(*refusal, res);
    if (body_follows(req)) close_after(req);
    return refusal->status;
  });
  // Every answer of 400 and above without a body (httplib's own) gets one in
  // the clients' format; Handled makes httplib state its length.
  set_error_handler(HandlerWithResponse([this](const httplib::Request&, httplib::Response& res) {
    add_failure_reason(res);
    if (res.body.empty()) put(options.error_answer(res.status, status_text(res.status)), res);
    return HandlerResponse::Handled;
  }));
  set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
    std::string what = "unknown exception";
    try {
      if (e) std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    std::fprintf(stderr, "%s: internal error: %s\n", options.name.c_str(), utf8_shortened(what, 300).c_str());
    put(options.error_answer(500, "internal error"), res);
  });
  // A client can tell an answer meant for another request.
  set_post_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.get_header_value("X-Request-Id");
    if (valid_request_id(id)) res.set_header("X-Request-Id", id);
  });
  set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    if (!observe) return;
    try {
      observe(head_of(req, false), res.status);
    } catch (...) {
    }
  });
}

// The screen's decision and then the body's framing, once per request (the
// "100 Continue" check and the pre-routing step both ask).
std::optional<response> server::impl::screen_head(const httplib::Request& req) {
  if (t_request && t_request->screened) return t_request->refusal;
  std::optional<response> out;
  try {
    if (check) out = check(head_of(req, false));
  } catch (...) {
    out = options.error_answer(500, "internal error");
  }
  if (!out) out = framing(req);
  if (t_request) {
    t_request->screened = true;
    t_request->refusal = out;
  }
  return out;
}

std::optional<response> server::impl::framing(const httplib::Request& req) const {
  const bool body_method = reads_body(req.method);
  // httplib would read a chunked body whole, whatever its size, and a body of
  // no stated length until the connection closes.
  if (req.has_header("Transfer-Encoding"))
    return options.error_answer(411, "a request body needs a Content-Length (chunked bodies are not read)");
  const size_t lengths = req.get_header_value_count("Content-Length");
  if (lengths == 0) {
    if (body_method) return options.error_answer(411, "a request body needs a Content-Length");
    return std::nullopt;
  }
  if (lengths > 1) return options.error_answer(400, "more than one Content-Length");
  const std::string value = req.get_header_value("Content-Length");
  const std::optional<size_t> bytes = parse_content_length(value);
  if (!bytes)
    return options.error_answer(400, "Content-Length '" + utf8_shortened(value, 40) + "' is not a number of bytes");
  if (*bytes > options.limits.max_body_bytes)
    return options.error_answer(413, "body of " + value + " bytes is over the limit of " +
                                         std::to_string(options.limits.max_body_bytes));
  if (!body_method && *bytes > 0) close_after(req);  // httplib reads no body for it: it must not become a request
  return std::nullopt;
}

// A request that failed on its deadline or its size is answered as such, not
// as httplib's "400".
void server::impl::add_failure_reason(httplib::Response& res) const {
  if (!t_request) return;
  auto seconds = [](double s) { return std::to_string(int(s + 0.5)) + " s"; };
  std::string message;
  switch (t_request->io.failure()) {
    case io_failure::head_timeout:
      res.status = 408;
      message = "the request line and headers did not arrive within " + seconds(deadlines.head_s);
      break;
    case io_failure::head_too_large:
      res.status = 431;
      message = "request headers larger than " + std::to_string(deadlines.max_head_bytes) + " bytes";
      break;
    case io_failure::body_timeout:
      res.status = 408;
      message = "the request body did not arrive within " + seconds(deadlines.body_s) + " plus 1 s per " +
                std::to_string(size_t(deadlines.min_bytes_per_s)) + " bytes";
      break;
    default: return;
  }
  res.body.clear();
  res.headers.erase("Content-Type");
  put(options.error_answer(res.status, message), res);
}

bool server::impl::process_and_close_socket(::socket_t sock) {
  ::fcntl(sock, F_SETFD, FD_CLOEXEC);  // evald forks workers: a client's socket must not live on in them
  const int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // an answer is two writes: headers, body
  connection_io io(sock, deadlines, stopping);
  deadline_stream stream(io);
  bool ok = false, refused = false;
  const size_t most = options.limits.max_requests_per_connection;
  for (size_t served = 0; served < most && !stopping.load(); ++served) {
    if (!io.wait_for_request()) break;
    io.begin_head();
    request_state state{io};
    t_request = &state;
    bool client_closes = false;
    ok = process_request(stream, served + 1 == most || stopping.load(), client_closes,
                         [&io](httplib::Request&) { io.begin_body(); });
    t_request = nullptr;
    refused = state.close_after;
    if (!ok || client_closes || refused || io.failure() != io_failure::none) break;
  }
  if (refused && io.writable()) linger(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

server::server(server_options options, handler respond, screen check, observer observe)
    : m_impl(std::make_unique<impl>(std::move(options), std::move(respond), std::move(check), std::move(observe))) {}

server::~server() { stop(); }

int server::bind(const std::string& host, int port) {
  if (m_impl->bound) throw std::logic_error(m_impl->options.name + ": bind() called twice");
  const listening_socket l =
      listen_exclusive(m_impl->options.name, host, port, m_impl->options.limits.listen_backlog);
  m_impl->adopt(l.fd);
  m_impl->bound = true;
  return l.port;
}

void server::serve() {
  if (!m_impl->stopping.load()) m_impl->listen_after_bind();
}

void server::stop() {
  if (!m_impl) return;
  m_impl->stopping = true;
  // As httplib's own stop(), but also before serve() has started (or when it
  // never does): the accept loop sees no socket and ends, the port is free.
  const int fd = m_impl->release_listener();
  if (fd != INVALID_SOCKET) {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }
}

bool server::serving() const { return m_impl->is_running(); }

}  // namespace ptxbench::http
