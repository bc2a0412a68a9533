#pragma once
// JSON views of run database rows for the viewer's /api endpoints.
#include <nlohmann/json.hpp>
#include <vector>

#include "agent/viewer/pages.hpp"

namespace ptxbench::viewer {

nlohmann::json experiment_json(const experiment_summary& s);
nlohmann::json experiment_detail_json(const experiment_row& e, const std::vector<trajectory_row>& trajectories);
// The trajectory with every turn: messages, feedback, reply, reasoning, candidate, evaluation.
nlohmann::json trajectory_json(const trajectory_row& t, const std::vector<turn_view>& turns);

}  // namespace ptxbench::viewer
