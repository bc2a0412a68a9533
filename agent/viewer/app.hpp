#pragma once
// The viewer's routes over a run database, without HTTP: a path in, a status,
// content type and body out. server.hpp puts this behind agent/http's server.
//
//   /                               experiments
//   /experiments/<id>               trajectories of an experiment, with stage badges
//   /experiments/<id>/report        the HTML report (plots) of that experiment
//   /trajectories/<id>              rounds: prompt, feedback, reply, PTX diff, figures, profile
//   /api/experiments                JSON list
//   /api/experiments/<id>           JSON experiment with its trajectories
//   /api/trajectories/<id>          JSON trajectory with every turn
//   /assets/<name>                  embedded CSS/JS
#include <mutex>
#include <string>

#include "agent/store/store.hpp"

namespace ptxbench::viewer {

struct http_response {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
};

class viewer_app {
 public:
  // `store` must outlive the app; it is only read.
  explicit viewer_app(run_store& store) : m_store(store) {}

  // Never throws: a malformed id is 400, an unknown path or row 404, any
  // failure of the store 500 (with the reason in the body). Thread-safe.
  http_response get(const std::string& path);

 private:
  http_response route(const std::string& path);
  run_store& m_store;
  std::mutex m_mutex;  // readers of run_store are not promised to be thread-safe
};

}  // namespace ptxbench::viewer
