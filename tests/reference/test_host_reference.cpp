// The host reference against the statements' mathematics, written out
// independently (statement_math.cpp), at a small size of every task: every
// layout, epilogue, scale, batch and group, GQA mapping, varlen packing,
// decode and the backward pass.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "evaluator/api/size_rules.hpp"
#include "evaluator/api/task.hpp"
#include "evaluator/gpu/host_reference.hpp"
#include "statement_math.hpp"

using namespace ptxbench;

namespace {

// The size of `t` with the fewest FLOPs (with several sequences when the task
// packs them: uneven lengths), with at most 2 batches; a grouped task's
// groups made 7 of a few rows, so that one is empty (index_inputs.hpp) while
// the size stays small. Every size the test uses obeys the task's rules.
size_point small_size(const task& t) {
  const size_point* best = nullptr;
  for (const auto& s : t.sizes) {
    if (t.op.varlen && s.values.at("B") < 2) continue;
    if (!best || task_flops(t, s) < task_flops(t, *best)) best = &s;
  }
  REQUIRE_MESSAGE(best, t.id << ": no size to test at");
  size_point s = *best;
  // Two batches or sequences show the batch stride as well as more would.
  for (const char* count : {"B", "L"})
    if (s.values.count(count) && s.values.at(count) > 2 && t.size_rules.at(count).multiple_of == 1) s.values[count] = 2;
  if (t.op.grouped) {
    s.values["G"] = 7;
    s.values["M"] = 5;
  }
  REQUIRE(size_rule_violation(t.size_rules, s).empty());
  return s;
}

bool generated(const tensor_spec& ts) {
  return ts.init.kind == input_distribution::shape::group_offsets ||
         ts.init.kind == input_distribution::shape::cu_seqlens;
}

void compare(const std::string& what, const std::vector<float>& got, const std::vector<double>& want) {
  CAPTURE(what);
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(double(got[i]) - want[i]);
    worst = std::max(worst, err);
    if (!(err <= 1e-4 + 1e-4 * std::abs(want[i]))) ++bad;
  }
  CHECK_MESSAGE(bad == 0, bad << " of " << got.size() << " elements differ, largest error " << worst);
}

}  // namespace

TEST_CASE("the host reference computes what each task's statement says - at a small size of every task") {
  std::mt19937_64 rng(20261205);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks")) {
    const size_point s = small_size(t);
    CAPTURE(t.id);
    CAPTURE(describe_size(s));
    gpu::host_tensors in;
    testing::values in_d;
    for (const auto& ts : t.tensors) {
      if (ts.role != tensor_role::input || generated(ts) || ts.name == "O" || ts.name == "LSE") continue;
      auto& v = in[ts.name];
      v.resize(size_t(tensor_elements(ts, s)));
      for (auto& x : v) x = uniform(rng);
      in_d[ts.name].assign(v.begin(), v.end());
    }
    if (t.family == "attention_bwd") {
      // O and LSE of the forward pass, from the same Q, K, V.
      const auto fwd = testing::statement_attention_forward(t, s, in_d);
      compare("forward O", gpu::host_attention_forward(t, s, in).at("O"), fwd.at("O"));
      for (const char* name : {"O", "LSE"}) {
        in_d[name] = fwd.at(name);
        in[name].assign(fwd.at(name).begin(), fwd.at(name).end());
        in_d[name].assign(in[name].begin(), in[name].end());  // both sides read the fp32 values
      }
    }
    const auto want = testing::statement_outputs(t, s, in_d);
    const auto got = gpu::host_reference(t, s, in);
    for (const auto& [name, values] : want) {
      REQUIRE_MESSAGE(got.count(name), name);
      compare(name, got.at(name), values);
    }
  }
}
