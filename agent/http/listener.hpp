#pragma once
// The listening socket of a server, bound exclusively: SO_REUSEADDR (a
// restarted server may bind while its old connections linger in TIME_WAIT)
// but never SO_REUSEPORT, which lets a second process listen on the same port
// and take a share of its connections without a word. POSIX sockets only.
#include <string>

namespace ptxbench::http {

struct listening_socket {
  int fd = -1;
  int port = 0;  // the bound port (the one picked when 0 was asked for)
};

// Binds host:port (a name, an IPv4 or IPv6 address, "[::1]"; port 0: any
// free port) and listens with `backlog`. The first address of the host that
// binds is taken, unless one is in use. Throws input_error "<who>: cannot listen on host:port: <why>"
// (the port in use, an address not this machine's, a privileged port, a host
// that does not resolve). The socket is close-on-exec.
listening_socket listen_exclusive(const std::string& who, const std::string& host, int port, int backlog);

}  // namespace ptxbench::http
