#include "evaluator/pool/timeline.hpp"

namespace ptxbench {

void note(evaluation_result& r, timeline_clock::time_point start, std::string what, timeline_clock::time_point at) {
  if (r.timeline.size() >= evaluation_result::k_timeline_steps) return;
  r.timeline.push_back({std::move(what), std::chrono::duration<double, std::milli>(at - start).count()});
}

void note_trail(evaluation_result& r, timeline_clock::time_point start, const std::string& who, const job_outcome& o) {
  if (o.sent_at == timeline_clock::time_point{}) return;
  for (const auto& step : o.trail)
    note(r, start, who + step.what,
         o.sent_at + std::chrono::duration_cast<timeline_clock::duration>(std::chrono::duration<double, std::milli>(step.at_ms)));
}

void note_passes(evaluation_result& r, timeline_clock::time_point start, const std::vector<pass_steps>& steps) {
  for (const auto& ps : steps) {
    note(r, start, ps.who + "asked for a spare", ps.asked);
    note_trail(r, start, ps.who, ps.outcome);
  }
  note(r, start, "counts collected");
}

}  // namespace ptxbench
