#include "tests/baselines/gpu_support.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace ptxbench::gpu_test {

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  throw std::runtime_error(std::string(what) + ": " + (name ? name : std::to_string(r)));
}

gpu& the_gpu() {
  static gpu g = [] {
    gpu out;
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
      const char* name = nullptr;
      cuGetErrorName(r, &name);
      out.why_not = std::string("cuInit failed: ") + (name ? name : std::to_string(r));
      out.absent = r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY;
      return out;
    }
    int count = 0;
    const CUresult counted = cuDeviceGetCount(&count);
    if (counted != CUDA_SUCCESS || count == 0) {
      out.why_not = counted == CUDA_SUCCESS ? "no CUDA device" : "cuDeviceGetCount failed";
      out.absent = counted == CUDA_SUCCESS;
      return out;
    }
    check(cuDeviceGet(&out.device, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&out.context, out.device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(out.context), "cuCtxSetCurrent");
    check(cuStreamCreate(&out.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    char name[256] = {0};
    cuDeviceGetName(name, sizeof(name), out.device);
    out.name = name;
    out.ok = true;
    return out;
  }();
  if (g.ok) cuCtxSetCurrent(g.context);
  return g;
}

device_memory::device_memory(size_t bytes) : m_bytes(bytes) { check(cuMemAlloc(&m_ptr, bytes), "cuMemAlloc"); }
device_memory::~device_memory() {
  if (m_ptr) cuMemFree(m_ptr);
}
void device_memory::upload(const void* host) { check(cuMemcpyHtoD(m_ptr, host, m_bytes), "cuMemcpyHtoD"); }
void device_memory::download(void* host) const { check(cuMemcpyDtoH(host, m_ptr, m_bytes), "cuMemcpyDtoH"); }
void device_memory::fill_bytes(uint8_t value) { check(cuMemsetD8(m_ptr, value, m_bytes), "cuMemsetD8"); }

uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float fp8_e4m3_to_float(uint8_t v) {
  const int sign = v >> 7, exponent = (v >> 3) & 0xf, mantissa = v & 0x7;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa) / 8.0f, -6);
  else
    magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  return sign ? -magnitude : magnitude;
}

float fp16_to_float(uint16_t h) {
  _Float16 f;
  std::memcpy(&f, &h, 2);
  return static_cast<float>(f);
}

namespace {
// splitmix64: fast, seedable, good enough for test data.
struct rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) / static_cast<float>(1ull << 24); }
};
}  // namespace

bf16_data random_bf16(size_t n, uint64_t seed, float lo, float hi) {
  rng r{seed};
  bf16_data d;
  d.bits.resize(n);
  d.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    d.bits[i] = float_to_bf16(lo + (hi - lo) * r.uniform());
    d.values[i] = bf16_to_float(d.bits[i]);
  }
  return d;
}

bf16_data random_fp16(size_t n, uint64_t seed, float lo, float hi) {
  rng r{seed};
  bf16_data d;
  d.bits.resize(n);
  d.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const auto h = static_cast<_Float16>(lo + (hi - lo) * r.uniform());
    std::memcpy(&d.bits[i], &h, 2);
    d.values[i] = static_cast<float>(h);
  }
  return d;
}

fp8_data random_fp8(size_t n, uint64_t seed, float max_abs) {
  rng r{seed};
  fp8_data d;
  d.bits.resize(n);
  d.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    for (;;) {
      const auto code = static_cast<uint8_t>(r.next() & 0xff);
      if ((code & 0x7f) == 0x7f) continue;  // NaN
      const float v = fp8_e4m3_to_float(code);
      if (std::fabs(v) > max_abs) continue;
      d.bits[i] = code;
      d.values[i] = v;
      break;
    }
  }
  return d;
}

std::vector<float> bf16_to_floats(const std::vector<uint16_t>& bits) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = bf16_to_float(bits[i]);
  return out;
}

task gemm_task(dtype input, dtype output) {
  task t;
  t.id = std::string("gemm_") + to_string(input) + "_test";
  t.family = "gemm";
  t.reference = "gemm";
  t.baseline = "cublaslt";
  t.tensors = {{"A", input, {"M", "K"}, tensor_role::input},
               {"B", input, {"N", "K"}, tensor_role::input},
               {"C", output, {"M", "N"}, tensor_role::output}};
  return t;
}

task attention_task(bool backward, bool causal) {
  task t;
  t.family = backward ? "attention_bwd" : "attention_fwd";
  t.id = t.family + (causal ? "_causal_test" : "_test");
  t.reference = t.family;
  t.baseline = backward ? "cudnn_sdpa_bwd" : "cudnn_sdpa_fwd";
  t.causal = causal;
  t.scalars = {{"scale", "rsqrt(D)"}};
  const std::vector<std::string> bhsd = {"B", "H", "S", "D"}, bhs = {"B", "H", "S"};
  const auto in = tensor_role::input, out = tensor_role::output;
  if (!backward) {
    t.tensors = {{"Q", dtype::bf16, bhsd, in}, {"K", dtype::bf16, bhsd, in}, {"V", dtype::bf16, bhsd, in},
                 {"O", dtype::bf16, bhsd, out}, {"LSE", dtype::fp32, bhs, out}};
  } else {
    t.tensors = {{"Q", dtype::bf16, bhsd, in},  {"K", dtype::bf16, bhsd, in},  {"V", dtype::bf16, bhsd, in},
                 {"O", dtype::bf16, bhsd, in},  {"dO", dtype::bf16, bhsd, in}, {"LSE", dtype::fp32, bhs, in},
                 {"dQ", dtype::bf16, bhsd, out}, {"dK", dtype::bf16, bhsd, out}, {"dV", dtype::bf16, bhsd, out}};
  }
  return t;
}

size_point sizes(std::initializer_list<std::pair<const char*, int64_t>> values) {
  size_point s;
  for (const auto& [name, v] : values) s.values[name] = v;
  s.timed = true;
  return s;
}

comparison compare(const std::vector<float>& out, const std::vector<double>& ref, double atol_of_max, double rtol) {
  comparison c;
  c.compared = ref.size();
  for (double r : ref) c.max_abs_ref = std::max(c.max_abs_ref, std::fabs(r));
  const double atol = atol_of_max * c.max_abs_ref;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(static_cast<double>(out[i]) - ref[i]);
    if (!(err <= atol + rtol * std::fabs(ref[i]))) ++c.mismatches;  // NaN counts as a mismatch
    if (!(err <= c.max_abs_error)) {
      c.max_abs_error = err;
      c.worst_index = i;
    }
  }
  return c;
}

std::string comparison::summary() const {
  std::ostringstream s;
  s << mismatches << "/" << compared << " mismatches, max |err| " << max_abs_error << " (max |ref| " << max_abs_ref
    << ", worst at " << worst_index << ")";
  return s.str();
}

}  // namespace ptxbench::gpu_test
