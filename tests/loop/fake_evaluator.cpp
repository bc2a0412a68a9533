#include "fake_evaluator.hpp"

#include <regex>
#include <thread>

namespace ptxbench::test {

evaluation_result fake_evaluator::evaluate(const evaluation_request& request) {
  ++m_calls;
  auto work = [&] {
    // The evaluation's cost is simulated time: what the orchestrator tests measure.
    if (m_cost_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_cost_ms));
  };
  if (m_serialized) {
    std::lock_guard<std::mutex> lock(m_gpu);
    work();
  } else {
    work();
  }
  static const std::regex re("// verdict: ([a-z_]+)");
  std::smatch m;
  std::string verdict = "passed";
  if (std::regex_search(request.ptx, m, re)) verdict = m[1];
  evaluation_result r;
  r.evaluator_version = version();
  r.gpu = gpu_description();
  r.passed = verdict == "passed";
  stage failing = r.passed ? stage::performance : parse_stage(verdict);
  r.verdict = failing;
  for (int i = 0; i < stage_count; ++i) {
    auto s = static_cast<stage>(i);
    if (r.passed || i < static_cast<int>(failing)) r.stages[s] = {stage_status::passed, "", 1.0};
    else if (s == failing) r.stages[s] = {stage_status::failed, "fake " + verdict + " failure", 1.0};
    else r.stages[s] = {stage_status::not_run, "an earlier stage failed", 0.0};
  }
  r.headline = r.passed ? "passed" : verdict + ": fake " + verdict + " failure";
  if (r.passed) {
    performance_report p;
    p.speedup = 1.25;
    p.baseline_name = "fake baseline";
    r.performance = p;
  }
  return r;
}

}  // namespace ptxbench::test
