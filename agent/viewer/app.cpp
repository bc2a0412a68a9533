#include "agent/viewer/app.hpp"

#include <charconv>
#include <vector>

#include "agent/data/metrics.hpp"
#include "agent/data/report.hpp"
#include "agent/http/server.hpp"
#include "agent/viewer/api.hpp"
#include "agent/viewer/assets.hpp"
#include "agent/viewer/pages.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::viewer {
namespace {

// A request the viewer refuses; carries the HTTP status.
struct http_error {
  int status;
  std::string message;
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

int64_t parse_id(const std::string& text) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
    throw http_error{400, "not a valid id: '" + text + "'"};
  }
  return id;
}

http_response html(std::string body) { return {200, "text/html; charset=utf-8", std::move(body)}; }
http_response json_response(const nlohmann::json& j) {
  return {200, http::k_json_content_type, json_text(j)};
}

experiment_row need_experiment(run_store& store, int64_t id) {
  auto e = store.experiment(id);
  if (!e) throw http_error{404, "no experiment " + std::to_string(id)};
  return *e;
}

trajectory_row need_trajectory(run_store& store, int64_t id) {
  auto t = store.trajectory(id);
  if (!t) throw http_error{404, "no trajectory " + std::to_string(id)};
  return *t;
}

std::vector<experiment_summary> summaries(run_store& store) {
  std::vector<experiment_summary> out;
  for (auto& e : store.experiments()) {
    experiment_summary s;
    for (const auto& t : store.trajectories(e.id)) {
      ++s.trajectories;
      s.passed += t.passed;
    }
    s.experiment = std::move(e);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

http_response viewer_app::get(const std::string& path) {
  bool api = path.rfind("/api/", 0) == 0;
  auto failure = [&](int status, const std::string& message) -> http_response {
    // The message may quote a decoded path holding invalid UTF-8 (%ff).
    if (api)
      return {status, http::k_json_content_type,
              json_text(nlohmann::json{{"error", message}})};
    return {status, "text/html; charset=utf-8", error_page(status, message)};
  };
  try {
    std::lock_guard lock(m_mutex);
    return route(path);
  } catch (const http_error& e) {
    return failure(e.status, e.message);
  } catch (const std::exception& e) {
    return failure(500, std::string("internal error: ") + e.what());
  } catch (...) {
    return failure(500, "internal error");
  }
}

http_response viewer_app::route(const std::string& path) {
  auto p = split_path(path);
  if (p.empty()) return html(experiments_page(summaries(m_store), m_store.path().string()));
  if (p[0] == "assets" && p.size() == 2) {
    const auto* a = find_asset(p[1]);
    if (!a) throw http_error{404, "no asset " + p[1]};
    return {200, std::string(content_type_of(a->name)), std::string(a->body)};
  }
  if (p[0] == "experiments" && (p.size() == 2 || (p.size() == 3 && p[2] == "report"))) {
    auto e = need_experiment(m_store, parse_id(p[1]));
    if (p.size() == 2) return html(experiment_page(e, m_store.trajectories(e.id)));
    const std::vector<data::experiment_data> loaded{data::load_experiment(m_store, e)};
    return html(data::render_report_html(data::compute_metrics(loaded), {e}, m_store.path().string(),
                                         data::compute_calls_curves(loaded)));
  }
  if (p[0] == "trajectories" && p.size() == 2) {
    auto t = need_trajectory(m_store, parse_id(p[1]));
    auto e = need_experiment(m_store, t.experiment_id);
    return html(trajectory_page(e, t, m_store.turns(t.id)));
  }
  if (p[0] == "api" && p.size() == 2 && p[1] == "experiments") {
    auto list = nlohmann::json::array();
    for (const auto& s : summaries(m_store)) list.push_back(experiment_json(s));
    return json_response(list);
  }
  if (p[0] == "api" && p.size() == 3 && p[1] == "experiments") {
    auto e = need_experiment(m_store, parse_id(p[2]));
    return json_response(experiment_detail_json(e, m_store.trajectories(e.id)));
  }
  if (p[0] == "api" && p.size() == 3 && p[1] == "trajectories") {
    auto t = need_trajectory(m_store, parse_id(p[2]));
    return json_response(trajectory_json(t, m_store.turns(t.id)));
  }
  throw http_error{404, "no page at " + path};
}

}  // namespace ptxbench::viewer
