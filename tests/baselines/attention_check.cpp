#include "tests/baselines/attention_check.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include "evaluator/baselines/cuda_check.hpp"
#include "tests/baselines/reference.hpp"

namespace ptxbench::gpu_test {
namespace {

struct row_id {
  int64_t head = 0, index = 0;
};

std::vector<row_id> rows_to_check(const attention_check_options& o) {
  std::vector<row_id> rows;
  const int64_t heads = o.b * o.h;
  if (o.sampled_rows == 0) {
    for (int64_t hd = 0; hd < heads; ++hd)
      for (int64_t i = 0; i < o.s; ++i) rows.push_back({hd, i});
  } else {
    for (int64_t r = 0; r < o.sampled_rows; ++r) rows.push_back({(r * 7919) % heads, (r * 104729 + 17) % o.s});
    rows.push_back({heads - 1, o.s - 1});  // the last row of the last head
  }
  return rows;
}

struct attention_inputs {
  bf16_data q, k, v;
  std::unique_ptr<device_memory> dq_in, dk_in, dv_in;
};

attention_inputs make_inputs(const attention_check_options& o, uint64_t seed) {
  const size_t n = static_cast<size_t>(o.b * o.h * o.s * o.d);
  attention_inputs in;
  in.q = random_bf16(n, seed + 1, -2.0f, 2.0f);
  in.k = random_bf16(n, seed + 2, -2.0f, 2.0f);
  in.v = random_bf16(n, seed + 3, -1.0f, 1.0f);
  in.dq_in = std::make_unique<device_memory>(n * 2);
  in.dk_in = std::make_unique<device_memory>(n * 2);
  in.dv_in = std::make_unique<device_memory>(n * 2);
  in.dq_in->upload(in.q.bits.data());
  in.dk_in->upload(in.k.bits.data());
  in.dv_in->upload(in.v.bits.data());
  return in;
}

attention_problem problem(const attention_check_options& o, const attention_inputs& in) {
  attention_problem p;
  p.b = o.b;
  p.h = o.h;
  p.s = o.s;
  p.d = o.d;
  p.causal = o.causal;
  p.scale = 1.0 / std::sqrt(static_cast<double>(o.d));
  p.q = in.q.values.data();
  p.k = in.k.values.data();
  p.v = in.v.values.data();
  return p;
}

std::unique_ptr<baseline> timed_make(const task& t, const size_point& s, const baseline_buffers& b,
                                     attention_check_result& r) {
  const auto start = std::chrono::steady_clock::now();
  auto base = make_baseline(t, s, b, the_gpu().stream);
  check(cuStreamSynchronize(the_gpu().stream), "cuStreamSynchronize");
  r.setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.available = base->available();
  r.name = base->name();
  r.why_not = base->why_not();
  return base;
}

void time_runs(baseline& base, int runs, attention_check_result& r) {
  if (runs <= 0) return;
  CUstream stream = the_gpu().stream;
  r.time_ms = baselines_detail::median_time_ms(stream, [&] { base.run(stream); }, 2, runs);
}

// Gathers the rows `rows` of a downloaded [heads, S, D] bf16 tensor.
std::vector<float> gather(const std::vector<uint16_t>& bits, const std::vector<row_id>& rows, int64_t s, int64_t d) {
  std::vector<float> out;
  for (const auto& r : rows)
    for (int64_t c = 0; c < d; ++c) out.push_back(bf16_to_float(bits[static_cast<size_t>((r.head * s + r.index) * d + c)]));
  return out;
}

}  // namespace

bool attention_check_result::passed() const {
  if (!available || tensors.empty()) return false;
  for (const auto& [name, c] : tensors)
    if (c.mismatches != 0) return false;
  return true;
}

std::string attention_check_result::summary() const {
  std::ostringstream s;
  s << (available ? name : "unavailable: " + why_not);
  for (const auto& [tensor, c] : tensors) s << "\n  " << tensor << ": " << c.summary();
  return s.str();
}

attention_check_result check_attention_forward(const attention_check_options& o) {
  attention_check_result r;
  const size_t n = static_cast<size_t>(o.b * o.h * o.s * o.d), rows_total = static_cast<size_t>(o.b * o.h * o.s);
  const attention_inputs in = make_inputs(o, 100);
  device_memory out(n * 2), lse(rows_total * 4);
  const task t = attention_task(false, o.causal);
  const size_point s = sizes({{"B", o.b}, {"H", o.h}, {"S", o.s}, {"D", o.d}});
  auto base = timed_make(t, s,
                         baseline_buffers{{{"Q", in.dq_in->ptr()}, {"K", in.dk_in->ptr()}, {"V", in.dv_in->ptr()},
                                           {"O", out.ptr()}, {"LSE", lse.ptr()}}},
                         r);
  if (!r.available) return r;
  out.fill_bytes(0xff);
  lse.fill_bytes(0xff);
  base->run(the_gpu().stream);
  check(cuStreamSynchronize(the_gpu().stream), "cuStreamSynchronize");
  std::vector<uint16_t> o_bits(n);
  std::vector<float> lse_values(rows_total);
  out.download(o_bits.data());
  lse.download(lse_values.data());
  time_runs(*base, o.timed_runs, r);

  const attention_problem p = problem(o, in);
  const std::vector<row_id> rows = rows_to_check(o);
  std::vector<double> o_ref, lse_ref;
  std::vector<float> lse_out;
  std::vector<double> row(static_cast<size_t>(o.d));
  for (const auto& rw : rows) {
    double l = 0.0;
    attention_forward_row(p, rw.head, rw.index, row.data(), l);
    o_ref.insert(o_ref.end(), row.begin(), row.end());
    lse_ref.push_back(l);
    lse_out.push_back(lse_values[static_cast<size_t>(rw.head * o.s + rw.index)]);
  }
  r.tensors.emplace_back("O", compare(gather(o_bits, rows, o.s, o.d), o_ref, 0.01, 0.02));
  r.tensors.emplace_back("LSE", compare(lse_out, lse_ref, 2e-4, 1e-4));
  return r;
}

attention_check_result check_attention_backward(const attention_check_options& o) {
  attention_check_result r;
  const size_t n = static_cast<size_t>(o.b * o.h * o.s * o.d), rows_total = static_cast<size_t>(o.b * o.h * o.s);
  const attention_inputs in = make_inputs(o, 200);
  const bf16_data d_o = random_bf16(n, 207, -1.0f, 1.0f);
  attention_problem p = problem(o, in);

  // O and LSE: from the fp64 reference when every row is checked, else from cuDNN's forward.
  std::vector<uint16_t> o_bits(n);
  std::vector<float> lse_values(rows_total);
  device_memory o_dev(n * 2), lse_dev(rows_total * 4), do_dev(n * 2);
  if (o.sampled_rows == 0) {
    std::vector<double> row(static_cast<size_t>(o.d));
    for (int64_t hd = 0; hd < o.b * o.h; ++hd)
      for (int64_t i = 0; i < o.s; ++i) {
        double l = 0.0;
        attention_forward_row(p, hd, i, row.data(), l);
        for (int64_t c = 0; c < o.d; ++c)
          o_bits[static_cast<size_t>((hd * o.s + i) * o.d + c)] = float_to_bf16(static_cast<float>(row[static_cast<size_t>(c)]));
        lse_values[static_cast<size_t>(hd * o.s + i)] = static_cast<float>(l);
      }
    o_dev.upload(o_bits.data());
    lse_dev.upload(lse_values.data());
  } else {
    const size_point s = sizes({{"B", o.b}, {"H", o.h}, {"S", o.s}, {"D", o.d}});
    auto fwd = make_baseline(attention_task(false, o.causal), s,
                             baseline_buffers{{{"Q", in.dq_in->ptr()}, {"K", in.dk_in->ptr()}, {"V", in.dv_in->ptr()},
                                               {"O", o_dev.ptr()}, {"LSE", lse_dev.ptr()}}},
                             the_gpu().stream);
    if (!fwd->available()) {
      r.why_not = "forward baseline for the backward inputs: " + fwd->why_not();
      return r;
    }
    fwd->run(the_gpu().stream);
    check(cuStreamSynchronize(the_gpu().stream), "cuStreamSynchronize");
    o_dev.download(o_bits.data());
    lse_dev.download(lse_values.data());
  }
  do_dev.upload(d_o.bits.data());
  const std::vector<float> o_values = bf16_to_floats(o_bits);
  p.o = o_values.data();
  p.d_o = d_o.values.data();
  p.lse = lse_values.data();

  device_memory dq(n * 2), dk(n * 2), dv(n * 2);
  const task t = attention_task(true, o.causal);
  const size_point s = sizes({{"B", o.b}, {"H", o.h}, {"S", o.s}, {"D", o.d}});
  auto base = timed_make(t, s,
                         baseline_buffers{{{"Q", in.dq_in->ptr()}, {"K", in.dk_in->ptr()}, {"V", in.dv_in->ptr()},
                                           {"O", o_dev.ptr()}, {"dO", do_dev.ptr()}, {"LSE", lse_dev.ptr()},
                                           {"dQ", dq.ptr()}, {"dK", dk.ptr()}, {"dV", dv.ptr()}}},
                         r);
  if (!r.available) return r;
  dq.fill_bytes(0xff);
  dk.fill_bytes(0xff);
  dv.fill_bytes(0xff);
  base->run(the_gpu().stream);
  check(cuStreamSynchronize(the_gpu().stream), "cuStreamSynchronize");
  std::vector<uint16_t> dq_bits(n), dk_bits(n), dv_bits(n);
  dq.download(dq_bits.data());
  dk.download(dk_bits.data());
  dv.download(dv_bits.data());
  time_runs(*base, o.timed_runs, r);

  const std::vector<row_id> rows = rows_to_check(o);
  std::map<int64_t, std::vector<double>> deltas;
  std::vector<double> dq_ref, dk_ref, dv_ref, row(static_cast<size_t>(o.d));
  for (const auto& rw : rows) {
    auto it = deltas.find(rw.head);
    if (it == deltas.end()) it = deltas.emplace(rw.head, attention_delta(p, rw.head)).first;
    attention_dq_row(p, rw.head, it->second, rw.index, row.data());
    dq_ref.insert(dq_ref.end(), row.begin(), row.end());
    attention_dk_row(p, rw.head, it->second, rw.index, row.data());
    dk_ref.insert(dk_ref.end(), row.begin(), row.end());
    attention_dv_row(p, rw.head, rw.index, row.data());
    dv_ref.insert(dv_ref.end(), row.begin(), row.end());
  }
  r.tensors.emplace_back("dQ", compare(gather(dq_bits, rows, o.s, o.d), dq_ref, 0.02, 0.03));
  r.tensors.emplace_back("dK", compare(gather(dk_bits, rows, o.s, o.d), dk_ref, 0.02, 0.03));
  r.tensors.emplace_back("dV", compare(gather(dv_bits, rows, o.s, o.d), dv_ref, 0.02, 0.03));
  return r;
}

}  // namespace ptxbench::gpu_test
