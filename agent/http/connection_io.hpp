#pragma once
// Reads and writes of one accepted connection under deadlines, so that a
// client cannot hold a server thread by being slow. A per-call timeout (all
// cpp-httplib has) is no bound: a client sending a byte a second never trips
// a 2 s read timeout, and 80 of them held every thread of the viewer.
//
// A request goes through phases, each with its own deadline:
//   idle  the first byte of the next request must come within idle_s;
//   head  the request line and headers must be complete head_s after it,
//         and no longer than max_head_bytes;
//   body  the body must be complete body_s after the headers, plus 1 s for
//         every min_bytes_per_s received (a large body on a slow link is fine,
//         a trickle is not).
// Writing an answer may block for write_s in all, plus 1 s for every
// min_bytes_per_s written: time the handler spends does not count, a client
// that reads a byte a second does. Waits wake every 100 ms to see `stopping`.
// POSIX sockets only; no HTTP here (server.cpp frames the requests).
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

namespace ptxbench::http {

struct io_deadlines {
  double idle_s = 5;
  double head_s = 10;
  double body_s = 10;
  double write_s = 10;
  double min_bytes_per_s = 64 * 1024;
  size_t max_head_bytes = 64 * 1024;
};

// Why a read or a write gave up (none while all went well).
enum class io_failure { none, head_timeout, head_too_large, body_timeout, write_timeout, closed };

class connection_io {
 public:
  // `fd` stays the caller's to close; `stopping` is read while waiting.
  connection_io(int fd, const io_deadlines& deadlines, const std::atomic<bool>& stopping);

  // Waits up to idle_s for the first byte of the next request (true), or
  // sees the connection closed, the server stopping or the time pass (false).
  bool wait_for_request();
  void begin_head();  // a request starts: its head deadline runs from now
  void begin_body();  // its headers are in: the body deadline runs from now

  // As recv(): bytes (> 0), 0 when the client closed, -1 past a deadline or
  // on an error (failure() says which).
  ssize_t read(char* out, size_t size);
  // As send(): bytes written (> 0), or -1 past the write budget or on an error.
  ssize_t write(const char* data, size_t size);
  // Bytes are buffered or waiting on the socket.
  bool readable() const;
  bool writable() const { return m_failure != io_failure::write_timeout && m_failure != io_failure::closed; }

  io_failure failure() const { return m_failure; }
  int fd() const { return m_fd; }
  // The peer's or the local address ("127.0.0.1", port); "" and 0 when unknown.
  void address(bool peer, std::string& ip, int& port) const;

 private:
  using clock = std::chrono::steady_clock;
  enum class phase { head, body };
  clock::time_point read_deadline() const;
  // Waits for `events` until `deadline`: true when ready, false past it or stopping.
  bool wait(short events, clock::time_point deadline) const;

  int m_fd;
  io_deadlines m_limits;
  const std::atomic<bool>& m_stopping;
  phase m_phase = phase::head;
  clock::time_point m_phase_start{};
  size_t m_phase_bytes = 0;      // bytes of the head or the body handed out so far
  double m_write_blocked_s = 0;  // time this request's answer spent waiting for the client
  size_t m_written = 0;
  io_failure m_failure = io_failure::none;
  char m_buffer[4096];           // cpp-httplib reads a request's head a byte at a time
  size_t m_buffered = 0, m_taken = 0;
};

}  // namespace ptxbench::http
