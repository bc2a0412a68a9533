#pragma once
// Connections to a loopback server that send a request one byte at a time,
// a byte every `every` on each, for as long as the server keeps them open:
// the "slowloris" client that holds a server thread without ever finishing a
// request. Each sends `head` and then an endless header line (or, when `head`
// ends a request head with a Content-Length, an endless body). Closed when the
// object goes.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::test {

class slow_clients {
 public:
  slow_clients(int port, int n, std::chrono::milliseconds every,
               std::string head = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
      : m_head(std::move(head)) {
    for (int i = 0; i < n; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      REQUIRE(fd >= 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
      m_fds.push_back(fd);
      // Paced, so that the server accepts each before the next: past a short
      // listen backlog a connection waits in the kernel for a SYN-ACK resent
      // after a second or more, and would not be holding a server thread yet.
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    m_sent.assign(m_fds.size(), 0);
    m_open.assign(m_fds.size(), true);
    m_thread = std::thread([this, every] { drip(every); });
  }
  ~slow_clients() {
    {
      std::lock_guard lock(m_mutex);
      m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
    for (int fd : m_fds) ::close(fd);
  }
  slow_clients(const slow_clients&) = delete;
  slow_clients& operator=(const slow_clients&) = delete;

  // Connections the server has not closed (a send to them has not failed yet).
  int open() const { return m_open_count.load(); }

 private:
  void drip(std::chrono::milliseconds every) {
    m_open_count = int(m_fds.size());
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
      for (size_t i = 0; i < m_fds.size(); ++i) {
        if (!m_open[i]) continue;
        const char byte = m_sent[i] < m_head.size() ? m_head[m_sent[i]] : 'a';
        if (::send(m_fds[i], &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
          ++m_sent[i];
        } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
          m_open[i] = false;
          --m_open_count;
        }
      }
      m_wake.wait_for(lock, every, [this] { return m_stop; });
    }
  }

  std::string m_head;
  std::vector<int> m_fds;
  std::vector<size_t> m_sent;
  std::vector<bool> m_open;
  std::atomic<int> m_open_count{0};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::thread m_thread;
};

}  // namespace ptxbench::test
