#pragma once
// The evaluation's timeline (evaluation_result::timeline): the steps of an
// evaluation in the supervisor and its workers, in ms from its start, bounded
// to k_timeline_steps.
#include <chrono>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/pool/worker_process.hpp"

namespace ptxbench {

using timeline_clock = std::chrono::steady_clock;

// Adds a step at `at` (default now); nothing once the timeline is full.
void note(evaluation_result& r, timeline_clock::time_point start, std::string what,
          timeline_clock::time_point at = timeline_clock::now());

// The steps of a worker's job, from its trail, prefixed with `who`.
void note_trail(evaluation_result& r, timeline_clock::time_point start, const std::string& who, const job_outcome& o);

// A counting pass's steps for the evaluation's timeline.
struct pass_steps {
  std::string who;  // "count <size slot>.<launch>: "
  timeline_clock::time_point asked{};
  job_outcome outcome;  // trail and sent_at only
};

// Each pass's steps, then the passes' end; the timeline is kept in time order.
void note_passes(evaluation_result& r, timeline_clock::time_point start, const std::vector<pass_steps>& steps);

}  // namespace ptxbench
