#pragma once
// What the GPU-library tests and the device probe share: one primary context
// and stream, device arrays mirrored on the host, bf16 / fp8-e4m3 conversion,
// seeded random data, task descriptions and an error comparison.
#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench::gpu_test {

struct gpu {
  bool ok = false;
  std::string why_not;  // set when no usable GPU (cuInit failed, no device)
  bool absent = false;  // no GPU at all (no device, or the toolkit's stub driver); else !ok is a broken GPU
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string name;
};

// Initialises CUDA once (driver API, primary context of device 0, one stream)
// and makes the context current on the calling thread.
gpu& the_gpu();

void check(CUresult r, const char* what);  // throws std::runtime_error

// Raw device memory of `bytes`, freed on destruction.
class device_memory {
 public:
  explicit device_memory(size_t bytes);
  ~device_memory();
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  CUdeviceptr ptr() const { return m_ptr; }
  size_t bytes() const { return m_bytes; }
  void upload(const void* host);
  void download(void* host) const;
  void fill_bytes(uint8_t value);

 private:
  CUdeviceptr m_ptr = 0;
  size_t m_bytes = 0;
};

uint16_t float_to_bf16(float f);  // round to nearest even
float bf16_to_float(uint16_t b);
float fp8_e4m3_to_float(uint8_t v);
float fp16_to_float(uint16_t h);

// Seeded uniform values in [lo, hi), rounded to bf16: `bits` for the device,
// `values` (the exact bf16 values as floats) for the reference.
struct bf16_data {
  std::vector<uint16_t> bits;
  std::vector<float> values;
};
bf16_data random_bf16(size_t n, uint64_t seed, float lo, float hi);

// Seeded uniform values in [lo, hi), rounded to fp16 (same layout as bf16_data).
bf16_data random_fp16(size_t n, uint64_t seed, float lo, float hi);

// Seeded fp8-e4m3 codes with |value| <= max_abs (no NaN), and their values.
struct fp8_data {
  std::vector<uint8_t> bits;
  std::vector<float> values;
};
fp8_data random_fp8(size_t n, uint64_t seed, float max_abs);

std::vector<float> bf16_to_floats(const std::vector<uint16_t>& bits);

// Task descriptions as the task files give them (tensors, baseline, causal, scale).
task gemm_task(dtype input, dtype output = dtype::bf16);
task attention_task(bool backward, bool causal);
size_point sizes(std::initializer_list<std::pair<const char*, int64_t>> values);

// |out - ref| <= atol_of_max * max|ref| + rtol * |ref| for every compared element.
struct comparison {
  size_t compared = 0;
  size_t mismatches = 0;
  double max_abs_error = 0.0;
  double max_abs_ref = 0.0;
  size_t worst_index = 0;
  std::string summary() const;
};
comparison compare(const std::vector<float>& out, const std::vector<double>& ref, double atol_of_max, double rtol);

}  // namespace ptxbench::gpu_test
