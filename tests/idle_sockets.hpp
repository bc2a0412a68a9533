#pragma once
// Connections to a loopback server that never send a byte: what a slow or
// idle client leaves a server holding. Closed when the object goes.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "wait_until.hpp"

namespace ptxbench::test {

class idle_sockets {
 public:
  idle_sockets(int port, int n) : m_port(port) {
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
  // Waits until the server on `port` has accepted every connection made so
  // far: its listening socket's accept queue (rx_queue of its LISTEN row in
  // /proc/net/tcp) is empty. False after `limit` without that.
  bool wait_accepted(std::chrono::milliseconds limit = std::chrono::seconds(20)) const {
    return wait_until([&] { return accept_queue(m_port) == 0; }, limit);
  }
  idle_sockets(const idle_sockets&) = delete;
  idle_sockets& operator=(const idle_sockets&) = delete;

 private:
  // Connections waiting in the accept queue of the listener on `port` (any
  // local address, IPv4 or IPv6); -1 when no such listener is found.
  static long accept_queue(int port) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, ":%04X", unsigned(port));
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
      std::ifstream in(table);
      std::string line;
      std::getline(in, line);  // header
      while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string slot, local_address, remote, state, queues;
        f >> slot >> local_address >> remote >> state >> queues;
        const bool on_port = local_address.size() > 5 && local_address.compare(local_address.size() - 5, 5, suffix) == 0;
        if (!on_port || state != "0A") continue;  // 0A: LISTEN
        return std::stol(queues.substr(queues.find(':') + 1), nullptr, 16);  // tx_queue:rx_queue
      }
    }
    return -1;
  }

  int m_port;
  std::vector<int> m_fds;
};

}  // namespace ptxbench::test
