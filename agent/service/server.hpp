#pragma once
// evald_service behind HTTP (cpp-httplib, seen only by server.cpp).
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
  // std::runtime_error when the address cannot be bound.
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
