#include "evaluator/gpu/correctness.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/where_summary.hpp"

namespace ptxbench::gpu {
namespace {

std::vector<size_point> ordered_sizes(const task& t) {
  std::vector<size_point> v = t.sizes;
  const size_point& timed = t.timed_size();
  auto volume = [&](const size_point& s) {
    int64_t n = 0;
    for (const auto& ts : t.tensors) n += tensor_elements(ts, s);
    return n;
  };
  std::stable_sort(v.begin(), v.end(), [&](const size_point& a, const size_point& b) {
    bool at = a.values == timed.values, bt = b.values == timed.values;
    if (at != bt) return bt;
    return volume(a) < volume(b);
  });
  return v;
}

}  // namespace

bool check_outputs(worker_state& w, reference_cache& refs, const task& t, const size_run& run,
                   const reference_set& ref, uint64_t seed, bool hidden, correctness_report& report) {
  bool all_passed = true;
  for (const auto& ts : t.tensors) {
    if (ts.role != tensor_role::output) continue;
    output_check c = compare_with_reference(w, t, ts.name, run, ref.outputs.at(ts.name).as<float>());
    c.seed = hidden ? 0 : seed;
    c.hidden_seed = hidden;
    all_passed &= c.passed;
    report.outputs.push_back(std::move(c));
  }
  if (!refs.intact(ref)) {
    // The candidate wrote outside its buffers into the evaluator's own data:
    // its comparison cannot be trusted, and no cached reference can either.
    refs.clear();
    report.guards_intact = false;
    std::string n = "the kernel wrote outside its buffers, into the evaluator's reference data, at " + run.size_name;
    report.note += (report.note.empty() ? "" : "; ") + n;
    all_passed = false;
  }
  return all_passed;
}

correctness_outcome run_correctness(worker_state& w, reference_cache& refs, CUmodule module,
                                    const std::vector<global_section>& globals, const protocol::worker_job& job) {
  correctness_outcome out;
  const task& t = job.t;
  std::vector<std::pair<uint64_t, bool>> seeds;
  for (uint64_t s : job.seeds) seeds.push_back({s, false});
  seeds.push_back({job.hidden_seed, true});
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> notes;
  auto add_note = [&](const std::string& n) {
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
  };
  std::vector<size_point> sizes = ordered_sizes(t);
  for (size_t si = 0; si < sizes.size(); ++si) {
    w.report("allocating buffers " + at_size(size_label(t, sizes[si])), 60000);
    auto run = make_size_run(w, module, t, job.m, sizes[si]);
    if (!run->plan.refusal.empty()) {
      out.runtime = runtime_report{"launch refused: " + run->plan.refusal, -1, run->size_name, false, run->size.hidden};
      out.runtime_stage = {stage_status::failed, out.runtime->error, 0.0};
      out.correctness_stage = {stage_status::not_run, "not reached: runtime failed", 0.0};
      return out;
    }
    uint64_t previous_hash = 0;
    bool previous_passed = false;
    for (const auto& [seed, hidden] : seeds) {
      w.report("inputs and references for seed " + at_size(run->size_name), 120000);
      std::shared_ptr<const reference_set> ref = refs.prepare(t, run->size, seed, run->addresses, !hidden);
      prepare_buffers(w, t, job.m, *run, globals);
      make_l2_cold(w, *run);
      auto before = input_checksums(w, t, *run);
      std::string context = hidden ? "hidden seed" : "seed " + std::to_string(seed);
      if (auto rt = run_launches(w, *run, job.time_limit_ms, context)) {
        if (!rt->context_lost) refs.clear();
        out.runtime = rt;
        out.runtime_stage = {stage_status::failed, rt->error, 0.0};
        out.correctness_stage = {stage_status::not_run, "not reached: runtime failed", 0.0};
        return out;
      }
      w.report("checking outputs " + at_size(run->size_name), 60000);
      for (const auto& [name, buf] : run->buffers) {
        int64_t damaged = buf->damaged_guard_bytes(w.scratch8.as<unsigned long long>(), w.stream);
        if (damaged > 0 && out.report.guards_intact)
          add_note("out-of-bounds write: " + std::to_string(damaged) + " bytes changed in the guard regions around " +
                   name + " at " + run->size_name);
        if (damaged > 0) {
          out.report.guards_intact = false;
          refs.clear();  // a write outside the buffers may have reached cached references too
        }
      }
      auto after = input_checksums(w, t, *run);
      size_t k = 0;
      for (const auto& ts : t.tensors) {
        if (ts.role != tensor_role::input) continue;
        if (before[k] != after[k]) {
          if (out.report.inputs_unchanged) add_note("input " + ts.name + " was modified by the kernel at " + run->size_name);
          out.report.inputs_unchanged = false;
        }
        ++k;
      }
      bool all_passed = check_outputs(w, refs, t, *run, *ref, seed, hidden, out.report);
      // A right answer followed by the same bits for fresh inputs: the kernel
      // returned a result kept from the earlier call.
      uint64_t hash = output_checksum(w, t, *run);
      if (previous_passed && hash == previous_hash && !all_passed) {
        if (out.report.stable_across_calls)
          add_note("the output at " + run->size_name +
                   " is bit-identical to the previous call's although the inputs changed: results are reused across calls");
        out.report.stable_across_calls = false;
      }
      previous_hash = hash;
      previous_passed = all_passed;
    }
    if (si + 1 == sizes.size()) out.timed = std::move(run);
  }
  for (const auto& n : notes) out.report.note += (out.report.note.empty() ? "" : "; ") + n;
  bool ok = out.report.guards_intact && out.report.inputs_unchanged && out.report.stable_across_calls;
  for (const auto& c : out.report.outputs) ok &= c.passed;
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.runtime_stage = {stage_status::passed, "", 0.0};
  char buf[128];
  std::snprintf(buf, sizeof buf, "%zu sizes x %zu seeds match the fp32 reference", sizes.size(), seeds.size());
  out.correctness_stage = {ok ? stage_status::passed : stage_status::failed,
                           ok ? std::string(buf) : correctness_headline(out.report), ms};
  return out;
}

}  // namespace ptxbench::gpu
