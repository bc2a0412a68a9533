#pragma once
// Helper kernels of the worker: seeded random inputs, type conversions,
// checksums, guard checks, output comparison and the softmax backward step of
// the fp32 attention references (the rest: reference_kernels.hpp). All are
// asynchronous on `stream` unless noted.
#include <cuda.h>

#include <cstdint>

namespace ptxbench::gpu {

enum class elem { bf16, fp16, fp8_e4m3, fp32, i32 };
int elem_bytes(elem t);

// Uniform values in [-1, 1], rounded to `t`, from a counter-based hash of
// (seed, tag, index): the same seed and tag give the same tensor on any GPU.
void fill_uniform(CUdeviceptr p, elem t, int64_t n, uint64_t seed, uint64_t tag, CUstream stream);

// A seeded draw from a task's input distribution (see input_distribution in
// evaluator/api/task.hpp), rows of `row_len` elements; the same seed and tag
// give the same tensor on any GPU.
struct fill_spec {
  bool normal = false;
  float scale = 1.f;
  float row_scale_min = 1.f, row_scale_max = 1.f;
  int64_t spike_every = 0;
  float spike_scale = 1.f;
  int64_t row_len = 1;
};
void fill_distribution(CUdeviceptr p, elem t, int64_t n, const fill_spec& spec, uint64_t seed, uint64_t tag,
                       CUstream stream);

// Resets the L2 eviction priority of every line of [p, p + bytes) to normal
// (applypriority.global.L2::evict_normal), so that evict_last hints a kernel
// left on its data cannot keep it in L2 through the flush that follows.
void demote_l2_lines(CUdeviceptr p, int64_t bytes, CUstream stream);
// One thread that spins until the host writes non-zero to *release (mapped
// host memory, device pointers given), or sets *timed_out after timeout_ns.
void hold_stream(const int* release, uint64_t timeout_ns, int* timed_out, CUstream stream);
void upcast_to_f32(CUdeviceptr src, elem t, int64_t n, float* dst, CUstream stream);
void downcast_from_f32(const float* src, int64_t n, elem t, CUdeviceptr dst, CUstream stream);

// 64-bit position-sensitive checksum of `bytes` bytes. Synchronises `stream`.
// `scratch` is 8 bytes of device memory.
uint64_t checksum(CUdeviceptr p, int64_t bytes, unsigned long long* scratch, CUstream stream);
// Number of bytes differing from `pattern`. Synchronises `stream`.
int64_t count_bytes_not(CUdeviceptr p, int64_t bytes, uint8_t pattern, unsigned long long* scratch, CUstream stream);

// Totals of one comparison (device struct, zeroed by the caller).
struct compare_totals {
  unsigned long long bad;        // outside tolerance, NaN/Inf or untouched
  unsigned long long nonfinite;  // NaN or Inf written by the kernel
  unsigned long long untouched;  // still the poison pattern
  unsigned int max_abs_bits;     // float bits of the largest |out - ref|
  unsigned int max_rel_bits;     // float bits of the largest |out - ref| / (|ref| + atol)
  unsigned int max_ref_bits;     // float bits of the largest |ref|
  unsigned int pad;
  double sum_sq_err;
  double sum_sq_ref;
  unsigned long long first_bad;  // smallest bad index; ~0 when none
};

// Compares `out` (bf16, fp16 or fp32) with the fp32 reference, element
// (r, c) at r*cols + c. Bad elements are counted per row, per column and per
// 128x128 tile (tile (tr, tc) at tr*tile_cols + tc); the three maps may be
// null (a timed sample's check needs only the totals).
void compare_output(CUdeviceptr out, elem t, const float* ref, int64_t n, int64_t cols, float atol, float rtol,
                    compare_totals* totals, unsigned* row_bad, unsigned* col_bad, unsigned* tile_bad, CUstream stream);

// dp[r, c] = p[r, c] * (dp[r, c] - delta[r])  (dS of attention backward, in place)
void softmax_backward(float* dp, const float* p, const float* delta, int64_t rows, int cols, CUstream stream);

}  // namespace ptxbench::gpu
