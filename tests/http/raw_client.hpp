#pragma once
// A running agent/http server on 127.0.0.1 (any free port) for one test, and a
// raw TCP client that writes exactly the bytes a test gives it, at its pace.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "agent/http/server.hpp"

namespace ptxbench::test {

class running_server {
 public:
  running_server(http::server_options o, http::handler h, http::screen s = nullptr, http::observer w = nullptr)
      : m_server(std::move(o), std::move(h), std::move(s), std::move(w)) {
    m_port = m_server.bind("127.0.0.1", 0);
    m_thread = std::thread([this] { m_server.serve(); });
  }
  ~running_server() {
    m_server.stop();
    m_thread.join();
  }
  int port() const { return m_port; }

 private:
  http::server m_server;
  int m_port = 0;
  std::thread m_thread;
};

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

class raw_client {
 public:
  explicit raw_client(int port, int receive_timeout_s = 10) {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(m_fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    timeval tv{receive_timeout_s, 0};
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~raw_client() { ::close(m_fd); }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  // Sends `bytes`; false once the server has closed (or reset) the connection.
  bool send(const std::string& bytes) {
    return ::send(m_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size());
  }
  // Sends `bytes` one at a time, `gap` apart, until done or the server closes.
  bool trickle(const std::string& bytes, std::chrono::milliseconds gap) {
    for (char c : bytes) {
      if (!send(std::string(1, c))) return false;
      std::this_thread::sleep_for(gap);
    }
    return true;
  }
  // Everything the server sends until it closes the connection (or the
  // receive timeout passes).
  std::string read_all() {
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = ::recv(m_fd, buffer, sizeof buffer, 0)) > 0;) out.append(buffer, size_t(n));
    return out;
  }
  // Reads until `marker` has arrived (or the connection ends).
  std::string read_until(const std::string& marker) {
    std::string out;
    char c;
    while (out.find(marker) == std::string::npos && ::recv(m_fd, &c, 1, 0) == 1) out += c;
    return out;
  }
  int fd() const { return m_fd; }

 private:
  int m_fd = -1;
};

}  // namespace ptxbench::test
