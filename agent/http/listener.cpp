#include "agent/http/listener.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "evaluator/common/json_path.hpp"

namespace ptxbench::http {
namespace {

std::string reason(int error) {
  switch (error) {
    case EADDRINUSE: return "the port is in use (another process listens on it)";
    case EADDRNOTAVAIL: return "the address is not one of this machine's";
    case EACCES: return "permission denied (ports below 1024 need privileges)";
    default: return std::strerror(error);
  }
}

// Binds and listens on one resolved address; the socket, or -1 with errno set.
int bind_one(const addrinfo& a, int backlog) {
  const int fd = ::socket(a.ai_family, a.ai_socktype | SOCK_CLOEXEC, a.ai_protocol);
  if (fd < 0) return -1;
  const int yes = 1, no = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (a.ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);  // "::" takes IPv4 too
  if (::bind(fd, a.ai_addr, a.ai_addrlen) == 0 && ::listen(fd, backlog) == 0) return fd;
  const int error = errno;
  ::close(fd);
  errno = error;
  return -1;
}

int bound_port(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&a)->sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port);
  return 0;
}

}  // namespace

listening_socket listen_exclusive(const std::string& who, const std::string& host, int port, int backlog) {
  const std::string where = who + ": cannot listen on " + host + ":" + std::to_string(port) + ": ";
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  const std::string node = bracketed ? host.substr(1, host.size() - 2) : host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(node.empty() ? nullptr : node.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw input_error(where + "the host does not resolve (" + ::gai_strerror(rc) + ")");
  int first_error = 0;
  listening_socket out;
  for (const addrinfo* a = found; a && out.fd < 0; a = a->ai_next) {
    out.fd = bind_one(*a, backlog);
    if (out.fd >= 0) break;
    if (first_error == 0 || errno == EADDRINUSE) first_error = errno;
    if (errno == EADDRINUSE) break;  // "localhost" taken on ::1 is not to be served on 127.0.0.1 instead
  }
  ::freeaddrinfo(found);
  if (out.fd < 0) throw input_error(where + reason(first_error));
  out.port = bound_port(out.fd);
  return out;
}

}  // namespace ptxbench::http
