#pragma once
// An evaluator for loop tests: the verdict is written in the candidate's PTX as
// "// verdict: <stage|passed>", so a scripted reply decides how it is judged.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>

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

// Ends the process for candidates marked "// verdict: crash", as a signal in a parser would.
class crashing_evaluator : public fake_evaluator {
 public:
  evaluation_result evaluate(const evaluation_request& r) override {
    if (r.ptx.find("verdict: crash") != std::string::npos) _exit(99);
    return fake_evaluator::evaluate(r);
  }
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
