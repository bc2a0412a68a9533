#pragma once
// An evaluator for loop tests: the verdict is written in the candidate's PTX as
// "// verdict: <stage|passed>", so a scripted reply decides how it is judged.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <chrono>
#include <mutex>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench::test {

class fake_evaluator : public evaluator {
 public:
  // cost_ms: time each evaluation takes; serialized: one at a time (like one GPU).
  explicit fake_evaluator(double cost_ms = 0, bool serialized = false) : m_cost_ms(cost_ms), m_serialized(serialized) {}
  evaluation_result evaluate(const evaluation_request& request) override;
  std::string version() const override { return "fake-1"; }
  std::string gpu_description() const override { return "none (fake)"; }
  int calls() const { return m_calls.load(); }

 private:
  double m_cost_ms;
  bool m_serialized;
  std::mutex m_gpu;
  std::atomic<int> m_calls{0};
};

// Throws for candidates marked "// verdict: throw" (std::exception) or
// "// verdict: throw_int" (anything else); judges the rest like fake_evaluator.
class throwing_evaluator : public fake_evaluator {
 public:
  evaluation_result evaluate(const evaluation_request& r) override {
    if (r.ptx.find("verdict: throw_int") != std::string::npos) throw 42;
    if (r.ptx.find("verdict: throw") != std::string::npos) throw std::runtime_error("harness exploded");
    return fake_evaluator::evaluate(r);
  }
};

// Crashes the process for candidates marked "// verdict: crash", as a failing
// parser or library would (SIGABRT raised by the process itself), after
// crash_after_ms; judges the rest like fake_evaluator(cost_ms).
// For a forked child that will crash: SIGABRT with its default action (not
// the test runner's report) and no core file.
inline void crash_plainly() {
  std::signal(SIGABRT, SIG_DFL);
  rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
}

class crashing_evaluator : public fake_evaluator {
 public:
  explicit crashing_evaluator(double cost_ms = 0, double crash_after_ms = 0)
      : fake_evaluator(cost_ms), m_crash_after_ms(crash_after_ms) {}
  evaluation_result evaluate(const evaluation_request& r) override {
    if (r.ptx.find("verdict: crash") != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_crash_after_ms));
      std::abort();
    }
    return fake_evaluator::evaluate(r);
  }

 private:
  double m_crash_after_ms;
};

// Unavailable (no service could be reached) for its first `unavailable_calls`
// calls, then judges like fake_evaluator.
class unavailable_evaluator : public fake_evaluator {
 public:
  explicit unavailable_evaluator(int unavailable_calls) : m_left(unavailable_calls) {}
  evaluation_result evaluate(const evaluation_request& r) override {
    if (m_left.fetch_sub(1) > 0) throw evaluator_unavailable("no evaluation service could judge for 300 s");
    return fake_evaluator::evaluate(r);
  }

 private:
  std::atomic<int> m_left;
};

}  // namespace ptxbench::test
