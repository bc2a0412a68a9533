#include "tests/gpu/host_inputs.hpp"

#include <cmath>
#include <cstring>

#include "tests/gpu/naive_reference.hpp"

namespace ptxbench::test_inputs {
namespace {

struct rng {
  uint64_t state;
  uint64_t next() {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 40) / 16777216.0f; }
};

}  // namespace

uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

float bf16_value(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float fp8_value(uint8_t v) {
  const int sign = v >> 7, exponent = (v >> 3) & 0xf, mantissa = v & 0x7;
  const float m = exponent == 0 ? std::ldexp(float(mantissa) / 8.0f, -6)
                                : std::ldexp(1.0f + float(mantissa) / 8.0f, exponent - 7);
  return sign ? -m : m;
}

float round_to(dtype t, float v) {
  switch (t) {
    case dtype::bf16: return bf16_value(bf16_bits(v));
    case dtype::fp16: return float(_Float16(v));
    case dtype::fp8_e4m3: {
      float best = 0.0f;
      for (int code = 0; code < 256; ++code) {
        if ((code & 0x7f) == 0x7f) continue;  // NaN
        const float c = fp8_value(uint8_t(code));
        if (std::fabs(c - v) < std::fabs(best - v)) best = c;
      }
      return best;
    }
    default: return v;
  }
}

std::map<std::string, std::vector<float>> draw_inputs(const task& t, const size_point& s, uint64_t seed) {
  std::map<std::string, std::vector<float>> in;
  rng r{seed};
  for (const auto& ts : t.tensors) {
    if (ts.role != tensor_role::input) continue;
    if (t.reference == "attention_bwd" && (ts.name == "O" || ts.name == "LSE")) continue;
    std::vector<float>& v = in[ts.name];
    if (ts.init.kind == input_distribution::shape::group_offsets ||
        ts.init.kind == input_distribution::shape::cu_seqlens) {
      const bool groups = ts.init.kind == input_distribution::shape::group_offsets;
      const auto parts = groups ? naive::documented_group_rows(s.values.at("G"), s.values.at("M"))
                                : naive::documented_lengths(s.values.at("B"), s.values.at("S"));
      v.push_back(0.0f);
      for (int64_t n : parts) v.push_back(v.back() + float(n));
      continue;
    }
    const int64_t n = tensor_elements(ts, s);
    v.resize(size_t(n));
    for (auto& x : v) {
      if (ts.type == dtype::fp8_e4m3) {
        uint8_t code;
        do code = uint8_t(r.next() & 0xff);
        while ((code & 0x7f) == 0x7f || std::fabs(fp8_value(code)) > 2.0f);  // 0x7f, 0xff: NaN
        x = fp8_value(code);
      } else {
        x = round_to(ts.type, r.uniform(-2.0f, 2.0f));
      }
    }
  }
  return in;
}

}  // namespace ptxbench::test_inputs
