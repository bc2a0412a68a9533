#pragma once
// The viewer's HTML pages, rendered from run database rows. No HTTP here: the
// server (server.hpp) fetches rows and calls these. Every string that came from
// a model, a task or a user is escaped with data::html_escape.
#include <optional>
#include <string>
#include <vector>

#include "agent/store/store.hpp"
#include "evaluator/api/profile.hpp"

namespace ptxbench::viewer {

// A full document around `body` with the embedded stylesheet and script.
std::string layout(const std::string& title, const std::string& body);
// A stage badge: <span class="badge compile">compile</span>; "" renders as "pending".
std::string badge(const std::string& verdict);
// The badge of one evaluation: its verdict as its stage statuses give it; a
// partial verdict (no stage failed, its first stage could not run, e.g. no
// GPU, or be verified) is a grey "<stage> not run" / "<stage> unverified"
// badge, never the stage's failure colour, whatever name the row stored.
std::string evaluation_badge(const std::optional<evaluation_row>& evaluation);

struct experiment_summary {
  experiment_row experiment;
  int trajectories = 0;
  int passed = 0;
};

std::string experiments_page(const std::vector<experiment_summary>& experiments, const std::string& database);
std::string experiment_page(const experiment_row& experiment, const std::vector<trajectory_row>& trajectories);
// Each round: prompt, feedback, reply, reasoning, PTX with its diff against the
// previous round's PTX, the evaluation's profile (profile_section) when it has
// one, manifest, and the evaluation's figures.
std::string trajectory_page(const experiment_row& experiment, const trajectory_row& trajectory,
                            const std::vector<turn_view>& turns);
std::string error_page(int status, const std::string& message);

// The evaluation's figures: verdict, headline, stage table, compile diagnostics,
// correctness per output, instruction checks, performance.
std::string evaluation_section(const evaluation_row& evaluation);
// The evaluation's profile (evaluator/api/profile.hpp); nullopt when it has
// none or its result does not parse.
std::optional<profile_report> evaluation_profile(const evaluation_row& evaluation);
// The profile beside the candidate's PTX, in a <div class="profile">: the
// kernel figures (the candidate's columns beside the library's), the roofline
// line, the plain reason of a part that could not run, the hottest lines (each
// a link to its line), and `ptx` as a listing with those lines marked (class
// "hot", a share-of-samples badge, the dominant stall as the title). Line n's
// anchor is "<anchor>-Ln"; an empty `ptx` lists no PTX.
std::string profile_section(const profile_report& profile, const std::string& ptx, const std::string& anchor);
// A <table class="diff"> of the line diff from old_text to new_text.
std::string diff_table(const std::string& old_text, const std::string& new_text);

}  // namespace ptxbench::viewer
