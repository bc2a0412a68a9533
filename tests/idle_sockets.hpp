#pragma once
// Connections to a loopback server that never send a byte: what a slow or
// idle client leaves a server holding. Closed when the object goes.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace ptxbench::test {

class idle_sockets {
 public:
  idle_sockets(int port, int n) {
    for (int i = 0; i < n; ++i) {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      REQUIRE(fd >= 0);
      m_fds.push_back(fd);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    }
  }
  ~idle_sockets() {
    for (int fd : m_fds) ::close(fd);
  }
  idle_sockets(const idle_sockets&) = delete;
  idle_sockets& operator=(const idle_sockets&) = delete;

 private:
  std::vector<int> m_fds;
};

}  // namespace ptxbench::test
