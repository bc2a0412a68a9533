#include "agent/http/connection_io.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ptxbench::http {
namespace {

using clock = std::chrono::steady_clock;
constexpr auto k_slice = std::chrono::milliseconds(100);  // how soon a wait sees the server stopping

clock::time_point after(clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

connection_io::connection_io(int fd, const io_deadlines& deadlines, const std::atomic<bool>& stopping)
    : m_fd(fd), m_limits(deadlines), m_stopping(stopping) {
  m_phase_start = clock::now();
}

bool connection_io::wait(short events, clock::time_point deadline) const {
  for (;;) {
    if (m_stopping.load()) return false;
    const auto now = clock::now();
    if (now >= deadline) return false;
    const auto slice = std::min<clock::duration>(deadline - now, k_slice);
    pollfd p{m_fd, events, 0};
    const int timeout_ms = int(std::chrono::ceil<std::chrono::milliseconds>(slice).count());
    const int n = ::poll(&p, 1, timeout_ms);
    if (n > 0) return true;  // ready, or an error/hang-up the next recv or send reports
    if (n < 0 && errno != EINTR) return true;
  }
}

bool connection_io::wait_for_request() {
  if (m_taken < m_buffered) return true;  // a pipelined request is already here
  return wait(POLLIN, after(clock::now(), m_limits.idle_s));
}

void connection_io::begin_head() {
  m_phase = phase::head;
  m_phase_start = clock::now();
  m_phase_bytes = 0;
  m_write_blocked_s = 0;
  m_written = 0;
}

void connection_io::begin_body() {
  m_phase = phase::body;
  m_phase_start = clock::now();
  m_phase_bytes = 0;
}

clock::time_point connection_io::read_deadline() const {
  if (m_phase == phase::head) return after(m_phase_start, m_limits.head_s);
  return after(m_phase_start, m_limits.body_s + double(m_phase_bytes) / m_limits.min_bytes_per_s);
}

bool connection_io::readable() const {
  if (m_taken < m_buffered) return true;
  pollfd p{m_fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

ssize_t connection_io::read(char* out, size_t size) {
  if (m_failure != io_failure::none) return -1;
  if (size == 0) return 0;
  if (m_taken == m_buffered) {
    m_taken = m_buffered = 0;
    // The deadline is checked whenever the client keeps us waiting; one that
    // always has the next bytes ready is no slow client.
    for (;;) {
      const ssize_t n = ::recv(m_fd, m_buffer, sizeof m_buffer, MSG_DONTWAIT);
      if (n == 0) return 0;
      if (n > 0) {
        m_buffered = size_t(n);
        break;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        m_failure = io_failure::closed;
        return -1;
      }
      if (!wait(POLLIN, read_deadline())) {
        if (m_stopping.load()) m_failure = io_failure::closed;
        else m_failure = m_phase == phase::head ? io_failure::head_timeout : io_failure::body_timeout;
        return -1;
      }
    }
  }
  size_t n = std::min(size, m_buffered - m_taken);
  if (m_phase == phase::head && m_phase_bytes + n > m_limits.max_head_bytes) {
    m_failure = io_failure::head_too_large;
    return -1;
  }
  std::memcpy(out, m_buffer + m_taken, n);
  m_taken += n;
  m_phase_bytes += n;
  return ssize_t(n);
}

ssize_t connection_io::write(const char* data, size_t size) {
  // A request that timed out is still answered (408); a dead or stalled client is not.
  if (!writable()) return -1;
  for (;;) {
    const ssize_t n = ::send(m_fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      m_written += size_t(n);
      return n;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      m_failure = io_failure::closed;
      return -1;
    }
    // The client does not take the bytes: wait, within what this answer may block.
    const double budget = m_limits.write_s + double(m_written) / m_limits.min_bytes_per_s;
    const auto start = clock::now();
    const bool ready = wait(POLLOUT, after(start, budget - m_write_blocked_s));
    m_write_blocked_s += std::chrono::duration<double>(clock::now() - start).count();
    if (!ready) {
      m_failure = m_stopping.load() ? io_failure::closed : io_failure::write_timeout;
      return -1;
    }
  }
}

void connection_io::address(bool peer, std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  auto* sa = reinterpret_cast<sockaddr*>(&a);
  ip.clear();
  port = 0;
  if ((peer ? ::getpeername(m_fd, sa, &len) : ::getsockname(m_fd, sa, &len)) != 0) return;
  char text[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    if (::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text)) ip = text;
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text)) ip = text;
    port = ntohs(v6->sin6_port);
  }
}

}  // namespace ptxbench::http
