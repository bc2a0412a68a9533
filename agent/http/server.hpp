#pragma once
// The one HTTP server of the project (evald, the viewer, the embedded
// endpoint): cpp-httplib behind a small interface, seen only by server.cpp.
// Every server made here has the same guards, so that a client can neither
// crash it nor hold it:
// - an exclusive bind: a port another process listens on is an input_error
//   naming it (cpp-httplib sets SO_REUSEPORT, which let two servers share a
//   port silently), with a listen backlog sized for bursts of connections;
// - deadlines per connection (connection_io.hpp): for the first byte of a
//   request, for the whole request line and headers, for the body at a
//   minimum rate, and for the answer at a minimum rate; a client past one is
//   answered 408 (or 431 for headers past max_head_bytes) and dropped;
// - the body's framing checked before it is read: a chunked body or a body
//   without Content-Length is 411, a Content-Length that is no decimal
//   number (or two of them) 400, one past max_body_bytes 413 — each answered
//   at once, the body unread and the connection closed;
// - handlers that throw become 500; brotli is never used (gzip when offered:
//   see server.cpp); a well-formed X-Request-Id comes back on every answer.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench::http {

// The JSON content type of every server of the project: with the charset
// named, cpp-httplib never takes it for "application/json" and compresses it
// only as gzip when offered (see server.cpp).
inline constexpr const char* k_json_content_type = "application/json; charset=utf-8";

using header_list = std::vector<std::pair<std::string, std::string>>;

struct request {
  std::string method;
  std::string path;  // percent-decoded, without the query
  header_list headers;
  std::string body;  // empty for the screen (the body is not read yet)
  // The value of header `name` (case-insensitive), "" when absent.
  std::string header(const std::string& name) const;
};

struct response {
  int status = 200;
  std::string body;
  std::string content_type = k_json_content_type;
  header_list headers;
};

// Answers a request. May throw: the client then gets error_answer(500).
using handler = std::function<response(const request&)>;
// Looks at a request's method, path and headers before its body is read: a
// response refuses it there (the body is never read and the connection
// closes after the answer), nullopt lets it go on. May throw (500).
using screen = std::function<std::optional<response>(const request& head)>;
// Told of every answer that went out, the server's own refusals included
// (metrics). Must not throw.
using observer = std::function<void(const request& head, int status)>;
// The body of an answer the server makes itself (400, 404, 408, 411, 413,
// 431, 500 ...), in the format of its clients.
using error_format = std::function<response(int status, const std::string& message)>;

struct limits {
  size_t threads = 128;        // connections served at once; more wait for a thread
  int listen_backlog = 1024;   // connections the kernel holds before they are accepted
  double idle_s = 5;           // wait for the first byte of a request
  double head_s = 10;          // request line and headers, from their first byte
  double body_s = 10;          // the body, plus 1 s for every min_bytes_per_s of it received
  double write_s = 10;         // time blocked writing an answer, plus 1 s per min_bytes_per_s written
  double min_bytes_per_s = 64 * 1024;
  size_t max_head_bytes = 64 * 1024;
  size_t max_body_bytes = 1 << 20;
  size_t max_requests_per_connection = 100;
};

struct server_options {
  std::string name = "server";  // in messages: "evald: cannot listen on ..."
  struct limits limits;
  header_list default_headers;  // on every answer
  error_format error_answer;    // default: {"error": message, "status": N} as JSON
};

class server {
 public:
  // `respond` answers every method and path; `screen` and `observe` may be empty.
  server(server_options options, handler respond, screen check = nullptr, observer observe = nullptr);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Listens on host:port (port 0: any free port) and returns the port.
  // Throws input_error naming the address when it cannot: taken by another
  // process, not this machine's, a privileged port, a host that does not resolve.
  int bind(const std::string& host, int port);
  // Serves until stop(); bind() first. Returns at once if stop() came first.
  void serve();
  // Stops serve() from any thread (a signal-watching one too): no new
  // connections, open ones end after their current request. Idempotent.
  void stop();
  // Whether serve() is accepting connections.
  bool serving() const;

 private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

// An X-Request-Id worth echoing: 1 to 128 of [A-Za-z0-9._-], safe in a header and a log.
bool valid_request_id(const std::string& id);

// `accept_encoding` without its br entries ("gzip, br;q=1, deflate" -> "gzip, deflate").
std::string without_brotli(const std::string& accept_encoding);

// A Content-Length value as a byte count: decimal digits only (no sign, no
// space inside), nullopt otherwise; a value past 2^63 reads as SIZE_MAX.
std::optional<size_t> parse_content_length(const std::string& value);

}  // namespace ptxbench::http
