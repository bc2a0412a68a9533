#pragma once
// evald_service behind agent/http's server: its deadlines for slow clients,
// its checks of a body's framing before the body is read (411, 413, 400), an
// exclusive bind, and every answer counted in the service's metrics.
#include <memory>
#include <string>

#include "agent/service/service.hpp"

namespace ptxbench::service {

class evald_server {
 public:
  // `service` must outlive the server.
  explicit evald_server(evald_service& service);
  ~evald_server();
  evald_server(const evald_server&) = delete;
  evald_server& operator=(const evald_server&) = delete;

  // Binds host:port (port 0: any free port) and returns the bound port.
  // Throws input_error when the host is not loopback and the service has no
  // token (an open evaluator on the network runs anyone's code on the GPU),
  // or when the address cannot be bound (a port another process listens on).
  int bind(const std::string& host, int port);
  // Serves until stop(); bind() first.
  void serve();
  // Stops serve() from another thread (or a signal-watching one). Idempotent.
  void stop();

 private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

}  // namespace ptxbench::service
