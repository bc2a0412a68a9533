#pragma once
// The fixture database served over real HTTP on 127.0.0.1 (any free port) for
// the duration of a test.
#include <thread>

#include "../data/fixture_db.hpp"
#include "agent/viewer/server.hpp"

namespace ptxbench::testing {

// A reply that would change the page if it were ever run as markup.
inline const std::string injected_reply =
    "<script>document.title='pwned'</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">";

class served_db {
 public:
  explicit served_db(const std::string& label)
      : m_db(make_fixture_db(label, "m1", injected_reply)), m_server(*m_db.store) {
    m_port = m_server.bind("127.0.0.1", 0);
    m_thread = std::thread([this] { m_server.serve(); });
  }
  ~served_db() {
    m_server.stop();
    m_thread.join();
  }
  int port() const { return m_port; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(m_port) + path; }
  fixture_db& db() { return m_db; }

 private:
  fixture_db m_db;
  viewer::viewer_server m_server;
  int m_port = 0;
  std::thread m_thread;
};

}  // namespace ptxbench::testing
