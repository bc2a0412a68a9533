// The check step of the performance stage: what the timed runs computed and
// changed, judged after the last sample (the GPU is shared again by then).
#include <cstddef>
#include <cstdio>
#include <optional>

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/timing_steps.hpp"
#ifdef PTXBENCH_HAVE_BASELINES
#include "evaluator/baselines/baselines.hpp"
#endif

namespace ptxbench::gpu {
namespace {

std::string sample_failure(const output_check& c, int index, int count) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s is wrong in timed run %d of %d at %s (the checked runs were right): %lld of %lld elements bad, "
                "%lld never written, max abs error %.3g, rel L2 %.3g; the timed runs must compute the same result",
                c.tensor.c_str(), index + 1, count, c.size.c_str(),
                (long long)(c.mismatch_fraction * double(c.elements) + 0.5), (long long)c.elements,
                (long long)c.untouched_count, c.max_abs_error, c.rel_l2_error);
  return buf;
}

void add_failure(timing_outcome& out, const std::string& what) {
  out.correctness_failure += (out.correctness_failure.empty() ? "" : "; ") + what;
}

// Every round's totals (the first wrong one kept in timed_checks), then the
// last round's output compared in full: where the bad elements sit, if any.
void judge_rounds(measurement& m, timing_outcome& out) {
  const task& t = m.job.t;
  const size_t n_out = m.outputs.size();
  std::vector<compare_totals> host(n_out * size_t(m.checked));
  PTXB_CU(cuMemcpyDtoHAsync(host.data(), m.totals.ptr(), host.size() * sizeof(compare_totals), m.w.stream));
  PTXB_CU(cuStreamSynchronize(m.w.stream));
  out.samples_checked = m.checked;
  for (int i = 0; i < m.checked; ++i) {
    bool wrong = false;
    for (size_t k = 0; k < n_out; ++k) {
      const tensor_spec& ts = *t.find_tensor(m.outputs[k]);
      output_check c = judge_totals(t, m.outputs[k], m.timed.size_name, tensor_elements(ts, m.timed.size),
                                    host[size_t(i) * n_out + k]);
      if (c.passed) continue;
      if (out.correctness_failure.empty()) {
        out.correctness_failure = sample_failure(c, i, m.checked);
        c.timed_run = true;
        out.timed_checks.push_back(c);
      }
      wrong = true;
    }
    out.samples_wrong += wrong;
  }
  for (const auto& name : m.outputs) {
    output_check c = compare_with_reference(m.w, t, name, m.timed, m.ref->outputs.at(name).as<float>());
    c.timed_run = true;
    if (!c.passed && out.correctness_failure.empty())
      out.correctness_failure =
          sample_failure(c, m.checked - 1, m.checked) + (c.where.empty() ? "" : "; " + c.where);
    out.timed_checks.push_back(c);
  }
}

// Inputs, guard bytes and the evaluator's cached references, as before the
// first round. A changed guard or reference drops every cached reference.
void check_integrity(measurement& m, timing_outcome& out) {
  performance_report& p = out.report;
  p.inputs_rechecked = input_checksums(m.w, m.job.t, m.timed) == m.inputs_before;
  if (!p.inputs_rechecked) add_failure(out, "an input was modified during the timed runs at " + m.timed.size_name);
  for (const auto& [name, buf] : m.timed.buffers)
    if (int64_t damaged = buf->damaged_guard_bytes(m.w.scratch8.as<unsigned long long>(), m.w.stream); damaged > 0) {
      m.refs.clear();
      add_failure(out, "out-of-bounds write: " + std::to_string(damaged) + " bytes changed in the guard regions around " +
                           name + " during the timed runs");
    }
  if (!m.refs.intact(*m.ref)) {
    m.refs.clear();
    add_failure(out, "the kernel wrote outside its buffers, into the evaluator's reference data, while timed");
  }
  p.output_rechecked = out.correctness_failure.empty();
}

// The baseline's own error on these inputs: what an honest implementation reaches.
void baseline_error(measurement& m, performance_report& p) {
  if (!m.base_lib.run) return;
  const task& t = m.job.t;
  device_memory one(sizeof(compare_totals));
  for (const auto& [name, mem] : m.base_lib.kept->outputs) {
    if (!m.ref->outputs.count(name)) continue;
    const tensor_spec& spec = *t.find_tensor(name);
    // In the type the library writes it in, if it writes it in the task's layout at all.
    std::optional<dtype> type = spec.type;
#ifdef PTXBENCH_HAVE_BASELINES
    type = m.base_lib.kept->library->output_type(name, spec.type);
#endif
    if (!type) continue;
    PTXB_CU(cuMemsetD8Async(one.ptr(), 0, sizeof(compare_totals), m.w.stream));
    PTXB_CU(cuMemsetD8Async(one.ptr() + offsetof(compare_totals, first_bad), 0xFF, 8, m.w.stream));
    const tolerance& tol = t.tolerance_for(name);
    compare_output(mem.ptr(), to_elem(*type), m.ref->outputs.at(name).as<float>(),
                   tensor_elements(spec, m.timed.size), 1, float(tol.atol), float(tol.rtol), one.as<compare_totals>(),
                   nullptr, nullptr, nullptr, m.w.stream);
    compare_totals h{};
    PTXB_CU(cuMemcpyDtoHAsync(&h, one.ptr(), sizeof h, m.w.stream));
    PTXB_CU(cuStreamSynchronize(m.w.stream));
    const tensor_spec& ts = *t.find_tensor(name);
    output_check c = judge_totals(t, name, m.timed.size_name, tensor_elements(ts, m.timed.size), h);
    p.baseline_rel_l2[name] = c.rel_l2_error;
    p.baseline_max_err_to_scale[name] = c.max_err_to_scale;
  }
}

}  // namespace

void check_timed_runs(measurement& m, timing_outcome& out) {
  m.w.report("checking the timed runs' outputs at " + m.timed.size_name, 60000);
  judge_rounds(m, out);
  check_integrity(m, out);
  baseline_error(m, out.report);
}

}  // namespace ptxbench::gpu
