// Every feedback template's claims follow the stage statuses: whatever a
// rendered feedback says of a stage (passed, failed, not run, unverified) is
// what the result says of it. One test per template, each over every status
// the stages before the verdict can have (passed, not run, unverified) and
// every feedback detail that picks it; a GPU-less run (correctness never ran)
// must never hear that its output is correct.
#include <doctest/doctest.h>

#include <functional>
#include <set>

#include "agent/prompt/prompt.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/verdict.hpp"

using namespace ptxbench;

namespace {

using statuses = std::array<stage_status, stage_count>;

const task& gemm() {
  static const task t = load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "gemm_bf16_mma_sync");
  return t;
}
const prompt_library& library() {
  static prompt_library p(std::string(PTXBENCH_SOURCE_DIR) + "/prompts");
  return p;
}

// A result as the evaluator would write it for these statuses.
evaluation_result result_of(const statuses& st) {
  evaluation_result r;
  for (int i = 0; i < stage_count; ++i) {
    const std::string reason = st[i] == stage_status::not_run      ? "GPU stages not requested"
                               : st[i] == stage_status::unverified ? "no executed-instruction counts"
                               : st[i] == stage_status::failed     ? "it failed"
                                                                   : "";
    r.stages[static_cast<stage>(i)] = {st[i], reason, 1.0};
  }
  const verdict v = verdict_of(r);
  r.passed = v.kind == verdict_kind::passed;
  r.verdict = v.at;
  r.headline = std::string(to_string(v.at)) + " " + to_string(st[static_cast<int>(v.at)]);
  if (st[2] == stage_status::failed) r.runtime = runtime_report{"CUDA_ERROR_ILLEGAL_ADDRESS", 0, "M=128", true};
  if (st[5] == stage_status::passed || st[5] == stage_status::failed) {
    performance_report p;
    p.speedup = 0.5;
    p.baseline_name = "cuBLASLt";
    r.performance = p;
  }
  return r;
}

// Every status assignment: the failed verdicts (stages before it passed, not
// run or unverified; after it not run), the partial ones, the full pass and
// an evaluator error.
std::vector<statuses> every_result() {
  const stage_status open[] = {stage_status::passed, stage_status::not_run, stage_status::unverified};
  std::vector<statuses> out;
  for (int failed = -1; failed < stage_count; ++failed) {
    const int free = failed < 0 ? stage_count : failed;  // stages that take any of `open`
    int combos = 1;
    for (int i = 0; i < free; ++i) combos *= 3;
    for (int c = 0; c < combos; ++c) {
      statuses st;
      st.fill(stage_status::not_run);
      for (int i = 0, k = c; i < free; ++i, k /= 3) st[i] = open[k % 3];
      if (failed >= 0) st[failed] = stage_status::failed;
      out.push_back(st);
    }
  }
  statuses error;
  error.fill(stage_status::not_run);
  error[2] = stage_status::error;
  out.push_back(error);
  return out;
}

// A phrase and the stage statuses under which saying it is true.
struct claim {
  std::string phrase;
  std::function<bool(const statuses&)> holds;
};

std::vector<claim> claims() {
  auto is = [](int s, stage_status want) { return [s, want](const statuses& st) { return st[s] == want; }; };
  auto all_passed = [](const statuses& st) {
    for (auto s : st)
      if (s != stage_status::passed) return false;
    return true;
  };
  auto none_failed = [](const statuses& st) {
    for (auto s : st)
      if (s == stage_status::failed || s == stage_status::error) return false;
    return true;
  };
  std::vector<claim> out = {
      {"is correct", is(3, stage_status::passed)},
      {"output is correct", is(3, stage_status::passed)},
      {"uses the targeted instructions", is(4, stage_status::passed)},
      {"compiled", is(1, stage_status::passed)},
      {"The kernel ran", is(2, stage_status::passed)},
      {"ran but", is(2, stage_status::passed)},
      {"passed every stage", all_passed},
      {"did not pass", [all_passed](const statuses& st) { return !all_passed(st); }},
      {"failed none of the checks", none_failed},
      {"failed no stage", none_failed},
      {"passed the checks", none_failed},
      {"rejected the PTX", is(1, stage_status::failed)},
      {"output is wrong", is(3, stage_status::failed)},
      {"did not run to completion", is(2, stage_status::failed)},
      {"were not all used as required", is(4, stage_status::failed)},
      {"too slow", is(5, stage_status::failed)},
      {"could not be judged:", is(0, stage_status::failed)},
  };
  for (int s = 0; s < stage_count; ++s) {
    const std::string name = to_string(static_cast<stage>(s));
    out.push_back({"failed at the **" + name + "** stage", is(s, stage_status::failed)});
    out.push_back({"- " + name + ": passed", is(s, stage_status::passed)});
    out.push_back({"- " + name + ": failed", is(s, stage_status::failed)});
    out.push_back({"- " + name + ": not run", is(s, stage_status::not_run)});
    out.push_back({"- " + name + ": unverified", is(s, stage_status::unverified)});
  }
  return out;
}

std::string describe(const statuses& st) {
  std::string out;
  for (int s = 0; s < stage_count; ++s) out += std::string(to_string(static_cast<stage>(s))) + "=" + to_string(st[s]) + " ";
  return out;
}

// Renders every result at every detail; for those whose feedback opens with
// `opening` (the template's own first words), checks every claim it makes.
// Returns how many feedbacks came from the template.
int check_template(const std::string& opening) {
  static const auto all = every_result();
  static const auto said = claims();
  int rendered = 0;
  for (const auto& st : all) {
    for (auto detail : {feedback_detail::none, feedback_detail::stage, feedback_detail::full}) {
      const std::string text = library().feedback(gemm(), result_of(st), 0, detail);
      if (text.find(opening) == std::string::npos) continue;
      ++rendered;
      for (const auto& c : said) {
        if (text.find(c.phrase) == std::string::npos) continue;
        INFO("statuses " << describe(st) << "detail " << to_string(detail) << "\n" << text);
        CHECK_MESSAGE(c.holds(st), "the feedback says '" << c.phrase << "'");
      }
    }
  }
  return rendered;
}

}  // namespace

TEST_CASE("feedback_format says only what the statuses say") { CHECK(check_template("round 0: format\n") > 0); }
TEST_CASE("feedback_compile says only what the statuses say") { CHECK(check_template("round 0: compile\n") > 0); }
TEST_CASE("feedback_runtime says only what the statuses say") { CHECK(check_template("round 0: runtime\n") > 0); }
TEST_CASE("feedback_correctness says only what the statuses say") {
  CHECK(check_template("round 0: correctness\n") > 0);
}
TEST_CASE("feedback_instructions says only what the statuses say - never that an output never checked is correct") {
  CHECK(check_template("round 0: instructions\n") > 0);
  // The case of every run without a GPU: the static check failed, correctness never ran.
  statuses st = {stage_status::passed,  stage_status::passed, stage_status::not_run,
                 stage_status::not_run, stage_status::failed, stage_status::not_run};
  const auto text = library().feedback(gemm(), result_of(st), 0, feedback_detail::full);
  CHECK(text.find("correct,") == std::string::npos);
  CHECK(text.find("- correctness: not run (GPU stages not requested)") != std::string::npos);
}
TEST_CASE("feedback_performance says only what the statuses say") {
  CHECK(check_template("round 0: performance\n") > 0);
}
TEST_CASE("feedback_passed says only what the statuses say") { CHECK(check_template("round 0: passed\n") > 0); }
TEST_CASE("feedback_not_run says only what the statuses say") {
  CHECK(check_template("round 0: not fully judged\n") > 0);
}
TEST_CASE("feedback_none says only what the statuses say - a pass is not told it did not pass") {
  CHECK(check_template("Your previous answer did not pass") > 0);
  CHECK(check_template("Your previous answer passed every stage") > 0);
}
TEST_CASE("feedback_stage says only what the statuses say - a stage that did not run is no failure") {
  CHECK(check_template("Your previous answer failed at") > 0);
  CHECK(check_template("Your previous answer failed no stage") > 0);
}
TEST_CASE("the feedback of an evaluator error blames no stage") {
  CHECK(check_template("not judged\n") > 0);
}
