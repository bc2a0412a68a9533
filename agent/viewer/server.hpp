#pragma once
// The viewer behind agent/http's server (deadlines for slow clients, an
// exclusive bind). Read-only: GET and HEAD, any other method is 405. Every
// response carries a Content-Security-Policy that allows scripts from /assets
// only, so even a string that escaped escaping could not run.
#include <memory>
#include <string>

#include "agent/store/store.hpp"

namespace ptxbench::viewer {

class viewer_server {
 public:
  // `store` must outlive the server.
  explicit viewer_server(run_store& store);
  ~viewer_server();
  viewer_server(const viewer_server&) = delete;
  viewer_server& operator=(const viewer_server&) = delete;

  // Binds host:port (port 0: any free port) and returns the bound port.
  // Throws input_error when the address cannot be bound (a port another
  // process listens on, an address not this machine's).
  int bind(const std::string& host, int port);
  // Serves requests until stop() is called; bind() first.
  void serve();
  // Stops serve() from another thread. Safe to call more than once.
  void stop();

 private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

}  // namespace ptxbench::viewer
