#include "evaluator/gpu/candidate_run.hpp"

#include <cmath>
#include <cstring>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/where_summary.hpp"

namespace ptxbench::gpu {

std::unique_ptr<size_run> make_size_run(worker_state& w, CUmodule module, const task& t, const manifest& m,
                                        const size_point& s) {
  auto r = std::make_unique<size_run>();
  r->size = s;
  r->size_name = size_label(t, s);
  for (const auto& ts : t.tensors) {
    size_t bytes = size_t(tensor_elements(ts, s)) * size_t(dtype_bytes(ts.type));
    r->buffers[ts.name] = std::make_unique<guarded_buffer>(bytes);
  }
  // Scratch is what the candidate asked for (within the format stage's bound):
  // an allocation that fails is its runtime failure, never the evaluator's.
  for (const auto& sc : m.scratch) {
    int64_t bytes = eval_int(sc.bytes, s.values);
    if (bytes < 0) bytes = 0;
    try {
      r->buffers[sc.name] = std::make_unique<guarded_buffer>(size_t(bytes));
    } catch (const cuda_error& e) {
      if (e.sticky) throw;
      r->buffers.erase(sc.name);
      r->plan.refusal = "scratch '" + sc.name + "' of " + std::to_string(bytes) + " bytes at size " + r->size_name +
                        " could not be allocated: " + e.what();
      return r;
    }
  }
  for (const auto& [name, b] : r->buffers) r->addresses[name] = b->ptr();
  r->plan = prepare_launches(module, m, t, s, r->addresses, w.limits);
  return r;
}

void prepare_buffers(worker_state& w, const task& t, const manifest& m, size_run& r,
                     const std::vector<global_section>& globals) {
  restore_global_sections(globals, w.stream);
  for (auto& [name, b] : r.buffers) b->arm_guards(w.stream);
  for (const auto& ts : t.tensors)
    if (ts.role == tensor_role::output)
      PTXB_CU(cuMemsetD8Async(r.addresses.at(ts.name), 0xFF, r.buffers.at(ts.name)->bytes(), w.stream));
  for (const auto& sc : m.scratch)
    PTXB_CU(cuMemsetD8Async(r.addresses.at(sc.name), sc.init == "poison" ? 0xFF : 0x00, r.buffers.at(sc.name)->bytes(),
                            w.stream));
}

void make_l2_cold(worker_state& w, const size_run& r) {
  for (const auto& [name, b] : r.buffers) demote_l2_lines(b->ptr(), int64_t(b->bytes()), w.stream);
  PTXB_CU(cuCtxResetPersistingL2Cache());
  static unsigned flush_value = 0;
  PTXB_CU(cuMemsetD32Async(w.l2_flush.ptr(), ++flush_value, w.l2_flush.bytes() / 4, w.stream));
}

std::optional<runtime_report> run_launches(worker_state& w, size_run& r, double time_limit_ms,
                                           const std::string& context) {
  for (size_t i = 0; i < r.plan.launches.size(); ++i) {
    prepared_launch& l = r.plan.launches[i];
    std::string what = "launch " + std::to_string(i) + " (" + l.kernel + ") " + at_size(r.size_name);
    w.report(what, time_limit_ms, int(i), r.size_name);
    CUresult e = enqueue(l, w.stream);
    bool at_launch = e != CUDA_SUCCESS;
    if (!at_launch) e = cuStreamSynchronize(w.stream);
    if (e == CUDA_SUCCESS) continue;
    runtime_report rt;
    rt.launch_index = int(i);
    rt.size = r.size_name;
    rt.hidden_size = r.size.hidden;
    // A non-sticky error can still have broken the context: probe it.
    rt.context_lost = is_sticky(e) || cuCtxSynchronize() != CUDA_SUCCESS;
    rt.error = describe(e) + (at_launch ? " when launching " : " in ") + what +
               (context.empty() ? "" : " (" + context + ")") +
               (rt.context_lost ? "; the CUDA context is lost, so the worker is replaced" : "");
    return rt;
  }
  return std::nullopt;
}

output_check judge_totals(const task& t, const std::string& name, const std::string& size_name, int64_t elements,
                          const compare_totals& host) {
  output_check c;
  c.tensor = name;
  c.size = size_name;
  c.elements = elements;
  float max_abs, max_rel, max_ref;
  std::memcpy(&max_abs, &host.max_abs_bits, 4);
  std::memcpy(&max_rel, &host.max_rel_bits, 4);
  std::memcpy(&max_ref, &host.max_ref_bits, 4);
  c.max_abs_error = max_abs;
  c.max_rel_error = max_rel;
  c.rel_l2_error = host.sum_sq_ref > 0 ? std::sqrt(host.sum_sq_err / host.sum_sq_ref) : std::sqrt(host.sum_sq_err);
  c.max_err_to_scale = max_ref > 0 ? double(max_abs) / double(max_ref) : double(max_abs);
  c.mismatch_fraction = elements > 0 ? double(host.bad) / double(elements) : 0.0;
  c.nan_count = int64_t(host.nonfinite);
  c.untouched_count = int64_t(host.untouched);
  const tolerance& tol = t.tolerance_for(name);
  c.passed = host.nonfinite == 0 && host.untouched == 0 &&
             double(host.bad) <= tol.max_mismatch_fraction * double(elements) &&
             (tol.rel_l2 <= 0 || c.rel_l2_error <= tol.rel_l2) &&
             (tol.max_err_to_scale <= 0 || c.max_err_to_scale <= tol.max_err_to_scale);
  if (!c.passed && host.bad <= tol.max_mismatch_fraction * double(elements) && host.nonfinite == 0 &&
      host.untouched == 0) {
    char buf[256];
    if (tol.rel_l2 > 0 && c.rel_l2_error > tol.rel_l2)
      std::snprintf(buf, sizeof buf, "relative L2 error %.3g exceeds the bound %.3g", c.rel_l2_error, tol.rel_l2);
    else
      std::snprintf(buf, sizeof buf, "max error %.3g of the output's scale (max |ref| %.3g) exceeds the bound %.3g",
                    c.max_err_to_scale, double(max_ref), tol.max_err_to_scale);
    c.where = buf;
  }
  return c;
}

void enqueue_compare_totals(worker_state& w, const task& t, const std::string& name, const size_point& s,
                            CUdeviceptr output, const float* ref, compare_totals* totals) {
  const tensor_spec& ts = *t.find_tensor(name);
  int64_t n = tensor_elements(ts, s);
  int64_t cols = ts.shape.empty() ? 1 : eval_int(ts.shape.back(), s.values);
  if (cols < 1) cols = 1;
  CUdeviceptr tp = reinterpret_cast<CUdeviceptr>(totals);
  PTXB_CU(cuMemsetD8Async(tp, 0, sizeof(compare_totals), w.stream));
  PTXB_CU(cuMemsetD8Async(tp + offsetof(compare_totals, first_bad), 0xFF, 8, w.stream));
  const tolerance& tol = t.tolerance_for(name);
  compare_output(output, to_elem(ts.type), ref, n, cols, float(tol.atol), float(tol.rtol), totals, nullptr, nullptr,
                 nullptr, w.stream);
}

output_check compare_with_reference(worker_state& w, const task& t, const std::string& name, const size_run& r,
                                    const float* ref) {
  const tensor_spec& ts = *t.find_tensor(name);
  int64_t elements = tensor_elements(ts, r.size);
  int64_t cols = ts.shape.empty() ? 1 : eval_int(ts.shape.back(), r.size.values);
  if (cols < 1) cols = 1;
  int64_t rows = elements / cols;
  int64_t tile_rows = (rows + 127) / 128, tile_cols = (cols + 127) / 128;
  device_memory totals(sizeof(compare_totals)), row_bad(size_t(rows) * 4), col_bad(size_t(cols) * 4),
      tile_bad(size_t(tile_rows * tile_cols) * 4);
  PTXB_CU(cuMemsetD8Async(totals.ptr(), 0, sizeof(compare_totals), w.stream));
  PTXB_CU(cuMemsetD8Async(totals.ptr() + offsetof(compare_totals, first_bad), 0xFF, 8, w.stream));
  PTXB_CU(cuMemsetD8Async(row_bad.ptr(), 0, row_bad.bytes(), w.stream));
  PTXB_CU(cuMemsetD8Async(col_bad.ptr(), 0, col_bad.bytes(), w.stream));
  PTXB_CU(cuMemsetD8Async(tile_bad.ptr(), 0, tile_bad.bytes(), w.stream));
  const tolerance& tol = t.tolerance_for(name);
  compare_output(r.addresses.at(name), to_elem(ts.type), ref, elements, cols, float(tol.atol), float(tol.rtol),
                 totals.as<compare_totals>(), row_bad.as<unsigned>(), col_bad.as<unsigned>(), tile_bad.as<unsigned>(),
                 w.stream);
  compare_totals host{};
  PTXB_CU(cuMemcpyDtoHAsync(&host, totals.ptr(), sizeof host, w.stream));
  PTXB_CU(cuStreamSynchronize(w.stream));
  output_check c = judge_totals(t, name, r.size_name, elements, host);
  c.hidden_size = r.size.hidden;
  if (host.bad == 0) return c;

  bad_element_map m;
  m.tensor = name;
  m.relative = r.size.hidden;
  m.rows = rows;
  m.cols = cols;
  m.bad = int64_t(host.bad);
  m.untouched = c.untouched_count;
  m.nonfinite = c.nan_count;
  m.row_bad.resize(size_t(rows));
  m.col_bad.resize(size_t(cols));
  m.tile_bad.resize(size_t(tile_rows * tile_cols));
  PTXB_CU(cuMemcpyDtoH(m.row_bad.data(), row_bad.ptr(), row_bad.bytes()));
  PTXB_CU(cuMemcpyDtoH(m.col_bad.data(), col_bad.ptr(), col_bad.bytes()));
  PTXB_CU(cuMemcpyDtoH(m.tile_bad.data(), tile_bad.ptr(), tile_bad.bytes()));
  if (host.first_bad != ~0ULL) {
    m.first_bad = int64_t(host.first_bad);
    float expected = 0.f;
    PTXB_CU(cuMemcpyDtoH(&expected, CUdeviceptr(ref + m.first_bad), 4));
    m.first_expected = expected;
    int bytes = dtype_bytes(ts.type);
    uint32_t raw = 0;
    PTXB_CU(cuMemcpyDtoH(&raw, r.addresses.at(name) + CUdeviceptr(m.first_bad * bytes), size_t(bytes)));
    m.first_untouched = (bytes == 2 && raw == 0xFFFFu) || (bytes == 4 && raw == 0xFFFFFFFFu);
    device_memory one(4);
    upcast_to_f32(r.addresses.at(name) + CUdeviceptr(m.first_bad * bytes), to_elem(ts.type), 1, one.as<float>(),
                  w.stream);
    float got = 0.f;
    PTXB_CU(cuMemcpyDtoHAsync(&got, one.ptr(), 4, w.stream));
    PTXB_CU(cuStreamSynchronize(w.stream));
    m.first_got = got;
  }
  std::string bound = c.where;  // a normalised bound judge_totals found exceeded
  c.where = summarize_bad_elements(m);
  if (!bound.empty()) c.where = bound + "; " + c.where;
  return c;
}

std::vector<uint64_t> input_checksums(worker_state& w, const task& t, const size_run& r) {
  std::vector<uint64_t> out;
  for (const auto& ts : t.tensors)
    if (ts.role == tensor_role::input)
      out.push_back(checksum(r.addresses.at(ts.name), int64_t(r.buffers.at(ts.name)->bytes()),
                             w.scratch8.as<unsigned long long>(), w.stream));
  return out;
}

uint64_t output_checksum(worker_state& w, const task& t, const size_run& r) {
  uint64_t h = 0;
  for (const auto& ts : t.tensors)
    if (ts.role == tensor_role::output)
      h = h * 1000003ULL ^ checksum(r.addresses.at(ts.name), int64_t(r.buffers.at(ts.name)->bytes()),
                                    w.scratch8.as<unsigned long long>(), w.stream);
  return h;
}

}  // namespace ptxbench::gpu
