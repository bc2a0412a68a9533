#include "agent/viewer/api.hpp"

namespace ptxbench::viewer {
namespace {

using json = nlohmann::json;

json experiment_fields(const experiment_row& e) {
  return {{"id", e.id},
          {"name", e.name},
          {"kind", e.kind},
          {"model", e.model},
          {"provider", e.provider},
          {"evaluator_version", e.evaluator_version},
          {"gpu", e.gpu},
          {"host", e.host},
          {"status", e.status},
          {"created_at", e.created_at},
          {"finished_at", e.finished_at},
          {"parent_experiment_id", e.parent_experiment_id ? json(*e.parent_experiment_id) : json(nullptr)},
          {"parent_database", e.parent_database}};
}

json trajectory_fields(const trajectory_row& t) {
  return {{"id", t.id},          {"experiment_id", t.experiment_id}, {"task", t.task_id},
          {"family", t.family},  {"sample", t.sample},               {"status", t.status},
          {"rounds_done", t.rounds_done}, {"final_verdict", t.final_verdict}, {"passed", t.passed}};
}

}  // namespace

json experiment_json(const experiment_summary& s) {
  json j = experiment_fields(s.experiment);
  j["trajectories"] = s.trajectories;
  j["passed"] = s.passed;
  return j;
}

json experiment_detail_json(const experiment_row& e, const std::vector<trajectory_row>& trajectories) {
  json j = experiment_fields(e);
  j["config"] = e.config;
  j["trajectories"] = json::array();
  for (const auto& t : trajectories) j["trajectories"].push_back(trajectory_fields(t));
  return j;
}

json trajectory_json(const trajectory_row& t, const std::vector<turn_view>& turns) {
  json j = trajectory_fields(t);
  j["turns"] = json::array();
  for (const auto& v : turns) {
    const auto& turn = v.turn;
    json tj = {{"id", turn.id},
               {"round", turn.round},
               {"model", turn.model},
               {"messages", turn.messages},
               {"feedback", turn.feedback},
               {"feedback_detail", turn.feedback_detail},
               {"reply", turn.reply},
               {"reasoning", turn.reasoning},
               {"finish_reason", turn.finish_reason},
               {"prompt_tokens", turn.prompt_tokens},
               {"completion_tokens", turn.completion_tokens},
               {"latency_ms", turn.latency_ms},
               {"candidate", nullptr},
               {"evaluation", nullptr}};
    if (v.candidate) {
      tj["candidate"] = {{"id", v.candidate->id},
                         {"ptx", v.candidate->ptx},
                         {"manifest", v.candidate->manifest},
                         {"format_problem", v.candidate->format_problem}};
    }
    if (v.evaluation) {
      const auto& e = *v.evaluation;
      tj["evaluation"] = {{"id", e.id},
                          {"verdict", e.verdict},
                          {"passed", e.passed},
                          {"correct", e.correct},
                          {"instructions_ok", e.instructions_ok},
                          {"speedup", e.speedup ? json(*e.speedup) : json(nullptr)},
                          {"evaluator_version", e.evaluator_version},
                          {"gpu", e.gpu},
                          {"origin_evaluation_id",
                           e.origin_evaluation_id ? json(*e.origin_evaluation_id) : json(nullptr)},
                          {"result", e.result}};
    }
    j["turns"].push_back(std::move(tj));
  }
  return j;
}

}  // namespace ptxbench::viewer
