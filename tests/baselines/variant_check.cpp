#include "tests/baselines/variant_check.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "evaluator/api/index_inputs.hpp"
#include "evaluator/baselines/baselines.hpp"
#include "evaluator/baselines/cuda_check.hpp"
#include "tests/baselines/gpu_support.hpp"
#include "tests/gpu/naive_reference.hpp"

namespace ptxbench::gpu_test {
namespace {

using buffer_map = std::map<std::string, std::unique_ptr<device_memory>>;

// Seeded uniform values in [-range, range] rounded to `type`: the device bits and the exact values.
std::vector<double> draw(device_memory& mem, dtype type, size_t n, uint64_t seed, float range) {
  std::vector<double> values(n);
  if (type == dtype::fp8_e4m3) {
    fp8_data d = random_fp8(n, seed, range);
    mem.upload(d.bits.data());
    for (size_t i = 0; i < n; ++i) values[i] = d.values[i];
  } else if (type == dtype::fp32) {
    bf16_data d = random_bf16(n, seed, -range, range);
    std::vector<float> f(d.values.begin(), d.values.end());
    mem.upload(f.data());
    for (size_t i = 0; i < n; ++i) values[i] = f[i];
  } else {
    bf16_data d = type == dtype::fp16 ? random_fp16(n, seed, -range, range) : random_bf16(n, seed, -range, range);
    mem.upload(d.bits.data());
    for (size_t i = 0; i < n; ++i) values[i] = d.values[i];
  }
  return values;
}

// Rounds `values` to `type`, uploads them and returns what the device holds.
std::vector<double> upload_rounded(device_memory& mem, dtype type, const std::vector<double>& values) {
  std::vector<double> held(values.size());
  if (type == dtype::fp32) {
    std::vector<float> f(values.begin(), values.end());
    mem.upload(f.data());
    held.assign(f.begin(), f.end());
  } else {  // bf16 (the attention backward's O)
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      bits[i] = float_to_bf16(static_cast<float>(values[i]));
      held[i] = bf16_to_float(bits[i]);
    }
    mem.upload(bits.data());
  }
  return held;
}

std::vector<double> download(const device_memory& mem, dtype type, size_t n) {
  std::vector<uint8_t> raw(mem.bytes());
  mem.download(raw.data());
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    uint16_t h = 0;
    float f = 0;
    switch (type) {
      case dtype::fp8_e4m3: out[i] = fp8_e4m3_to_float(raw[i]); break;
      case dtype::fp32: std::memcpy(&f, &raw[i * 4], 4); out[i] = f; break;
      case dtype::fp16: std::memcpy(&h, &raw[i * 2], 2); out[i] = fp16_to_float(h); break;
      default: std::memcpy(&h, &raw[i * 2], 2); out[i] = bf16_to_float(h); break;
    }
  }
  return out;
}

output_error compare(const std::string& name, dtype type, const std::vector<double>& out,
                     const std::vector<double>& ref) {
  output_error e{name, to_string(type), 0.0, 0.0, true};
  double sse = 0, ssr = 0, max_err = 0, max_ref = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(out[i] - ref[i]);
    sse += err * err;
    ssr += ref[i] * ref[i];
    max_err = std::isnan(err) ? INFINITY : std::max(max_err, err);
    max_ref = std::max(max_ref, std::fabs(ref[i]));
  }
  e.rel_l2 = ssr > 0 ? std::sqrt(sse / ssr) : std::sqrt(sse);
  if (std::isnan(e.rel_l2)) e.rel_l2 = INFINITY;
  e.max_err_to_scale = max_ref > 0 ? max_err / max_ref : max_err;
  return e;
}

// Writes every input; returns the host values (empty when !verify: constants).
naive::tensor_values fill(const task& t, const size_point& s, buffer_map& buffers, bool verify) {
  naive::tensor_values host;
  const bool bwd = t.reference == "attention_bwd";
  uint64_t seed = 11;
  for (const auto& ts : t.tensors) {
    if (ts.role != tensor_role::input) continue;
    device_memory& mem = *buffers.at(ts.name);
    const size_t n = static_cast<size_t>(tensor_elements(ts, s));
    if (ts.init.kind == input_distribution::shape::group_offsets ||
        ts.init.kind == input_distribution::shape::cu_seqlens) {
      const bool groups = ts.init.kind == input_distribution::shape::group_offsets;
      std::vector<int32_t> v = groups ? group_offsets(s.values.at("G"), s.values.at("M"))
                                      : varlen_cu_seqlens(s.values.at("B"), s.values.at("S"));
      mem.upload(v.data());
      host[ts.name].assign(v.begin(), v.end());
    } else if (bwd && (ts.name == "O" || ts.name == "LSE")) {
      continue;  // below, from the forward pass
    } else if (verify) {
      host[ts.name] = draw(mem, ts.type, n, ++seed, ts.name == "Q" || ts.name == "K" ? 2.0f : 1.0f);
    } else {
      // Constants small enough that no softmax overflows: 0.125 in each type.
      const uint8_t byte = ts.type == dtype::fp8_e4m3 ? 0x28 : 0;
      if (ts.type == dtype::fp8_e4m3) mem.fill_bytes(byte);
      else if (ts.type == dtype::fp32) check(cuMemsetD32(mem.ptr(), 0x3e000000u, n), "cuMemsetD32");
      else check(cuMemsetD16(mem.ptr(), ts.type == dtype::fp16 ? 0x3000 : 0x3e00, n), "cuMemsetD16");
    }
  }
  if (bwd) {
    if (verify) {
      task fwd = t;
      fwd.reference = "attention_fwd";
      naive::tensor_values f = naive::attention_forward(fwd, s, host);
      host["O"] = upload_rounded(*buffers.at("O"), t.find_tensor("O")->type, f.at("O"));
      host["LSE"] = upload_rounded(*buffers.at("LSE"), dtype::fp32, f.at("LSE"));
    } else {
      check(cuMemsetD16(buffers.at("O")->ptr(), 0x3e00, buffers.at("O")->bytes() / 2), "cuMemsetD16");
      buffers.at("LSE")->fill_bytes(0);
    }
  }
  return host;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// A size a little larger than the fixture's, still checkable on the host in seconds.
size_point probe_size(const task& t) {
  const size_point& f = t.timed_size();
  size_point s;
  s.timed = true;
  auto has = [&](const char* n) { return f.values.count(n) > 0; };
  if (t.family == "gemm") {
    const bool fp8 = t.find_tensor("A")->type == dtype::fp8_e4m3;
    s.values = {{"M", 200}, {"N", fp8 ? 272 : 264}, {"K", fp8 ? 144 : 136}};
    if (t.op.batched) s.values = {{"L", 5}, {"M", 72}, {"N", 128}, {"K", 96}};
    if (t.op.grouped) s.values = {{"G", 12}, {"M", 40}, {"N", 128}, {"K", 88}};
    return s;
  }
  const int64_t ratio = has("HKV") ? f.values.at("H") / f.values.at("HKV") : 1;
  s.values = {{"B", 2}, {"H", 8}, {"S", 203}, {"D", f.values.at("D")}};
  if (t.op.varlen) s.values.at("B") = 4, s.values.at("S") = 250;
  if (t.op.decode) s.values.at("B") = 4, s.values.at("S") = 1000;
  if (has("HKV")) s.values["HKV"] = f.values.at("HKV") == 1 ? 1 : 8 / ratio;  // MQA stays MQA
  return s;
}

bool variant_result::passed(double rel_l2_bound) const {
  if (!available || !error.empty()) return false;
  for (const auto& o : outputs)
    if (o.compared && !(o.rel_l2 <= rel_l2_bound)) return false;
  return true;
}

std::string variant_result::summary() const {
  std::ostringstream s;
  if (!available) return "unavailable: " + name + ": " + why_not;
  s << name;
  if (!error.empty()) s << "; ERROR " << error;
  for (const auto& o : outputs) {
    if (!o.compared) {
      s << "; " << o.tensor << " not in the task layout";
      continue;
    }
    s << "; " << o.tensor << " (" << o.type << ") relL2 " << o.rel_l2 << " err/scale " << o.max_err_to_scale;
  }
  s << "; setup " << setup_ms << " ms";
  if (time_ms > 0) s << ", median " << time_ms << " ms";
  return s.str();
}

variant_result check_variant(const task& t, const size_point& s, bool verify, int timed_runs) {
  gpu& g = the_gpu();
  variant_result r;
  buffer_map buffers;
  baseline_buffers bb;
  for (const auto& ts : t.tensors) {
    const size_t bytes = static_cast<size_t>(tensor_elements(ts, s)) * dtype_bytes(ts.type);
    buffers[ts.name] = std::make_unique<device_memory>(std::max<size_t>(bytes, 16));
    bb.tensors[ts.name] = buffers[ts.name]->ptr();
  }
  try {
    const naive::tensor_values host = fill(t, s, buffers, verify);
    const auto t0 = std::chrono::steady_clock::now();
    auto base = make_baseline(t, s, bb, g.stream);
    r.setup_ms = ms_since(t0);
    r.available = base->available();
    r.name = base->name();
    r.why_not = base->why_not();
    if (!r.available) return r;
    for (const auto& ts : t.tensors)
      if (ts.role == tensor_role::output) buffers.at(ts.name)->fill_bytes(0xff);
    base->run(g.stream);
    check(cuStreamSynchronize(g.stream), "cuStreamSynchronize after the baseline");
    if (verify) {
      const naive::tensor_values ref = naive::outputs(t, s, host);
      for (const auto& ts : t.tensors) {
        if (ts.role != tensor_role::output) continue;
        const std::optional<dtype> type = base->output_type(ts.name, ts.type);
        if (!type) {
          r.outputs.push_back({ts.name, "", 0, 0, false});
          continue;
        }
        const auto out = download(*buffers.at(ts.name), *type, size_t(tensor_elements(ts, s)));
        r.outputs.push_back(compare(ts.name, *type, out, ref.at(ts.name)));
      }
    }
    if (timed_runs > 0)
      r.time_ms = baselines_detail::median_time_ms(g.stream, [&] { base->run(g.stream); }, 2, timed_runs);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace ptxbench::gpu_test
