// Kernels of known instruction mix for the hardware-counter probe
// (counter_probe.cpp): each runs one kind of math K times per thread or warp,
// so the executed counts are known in advance and can be set beside CUPTI's
// patched counts and the hardware counters. Their parameters are a GEMM
// task's (A, B, C, M, N, K), bound by the probe's manifests; C is written only
// when a result equals an impossible value, so nothing is optimised away.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define PROBE_ARGS const unsigned short *A, const unsigned short *B, unsigned short *C, int M, int N, int K

namespace {
__device__ float input(const unsigned short* p, int i) { return __uint_as_float(unsigned(p[i & 1023]) << 16); }
__device__ unsigned word(const unsigned short* p, int i) { return unsigned(p[i & 1023]) | (unsigned(p[(i + 1) & 1023]) << 16); }
}  // namespace

extern "C" __global__ void k_ffma(PROBE_ARGS) {
  float a = input(A, threadIdx.x), b = input(B, threadIdx.x), x0 = a, x1 = b, x2 = a + 1, x3 = b + 1;
  for (int i = 0; i < K; ++i) {
    x0 = fmaf(x0, a, b);
    x1 = fmaf(x1, a, b);
    x2 = fmaf(x2, b, a);
    x3 = fmaf(x3, b, a);
  }
  if (x0 + x1 + x2 + x3 == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_fmul_fadd(PROBE_ARGS) {
  float a = input(A, threadIdx.x), b = input(B, threadIdx.x), x0 = a, x1 = b;
  for (int i = 0; i < K; ++i) {
    x0 = __fmul_rn(x0, a);
    x1 = __fadd_rn(x1, b);
  }
  if (x0 + x1 == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_hfma2(PROBE_ARGS) {
  __half2 a = __floats2half2_rn(input(A, threadIdx.x), 0.5f), b = __floats2half2_rn(input(B, threadIdx.x), 0.25f);
  __half2 x0 = a, x1 = b;
  for (int i = 0; i < K; ++i) {
    x0 = __hfma2(x0, a, b);
    x1 = __hfma2(x1, b, a);
  }
  if (__low2float(x0) + __high2float(x1) == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_hfma2_bf16(PROBE_ARGS) {
  __nv_bfloat162 a = __floats2bfloat162_rn(input(A, threadIdx.x), 0.5f),
                 b = __floats2bfloat162_rn(input(B, threadIdx.x), 0.25f);
  __nv_bfloat162 x0 = a, x1 = b;
  for (int i = 0; i < K; ++i) {
    x0 = __hfma2(x0, a, b);
    x1 = __hfma2(x1, b, a);
  }
  if (__low2float(x0) + __high2float(x1) == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_dfma(PROBE_ARGS) {
  double a = input(A, threadIdx.x), b = input(B, threadIdx.x), x0 = a, x1 = b, x2 = a, x3 = b;
  for (int i = 0; i < K; ++i) {
    x0 = fma(x0, a, b);
    x1 = fma(x1, b, a);
    x2 = __dmul_rn(x2, a);
    x3 = __dadd_rn(x3, b);
  }
  if (x0 + x1 + x2 + x3 == 12345.0) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_hmma_bf16(PROBE_ARGS) {
  unsigned a0 = word(A, threadIdx.x), a1 = word(A, threadIdx.x + 7), a2 = word(A, threadIdx.x + 13),
           a3 = word(A, threadIdx.x + 17), b0 = word(B, threadIdx.x), b1 = word(B, threadIdx.x + 5);
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  for (int i = 0; i < K; ++i)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  if (d0 + d1 + d2 + d3 == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_hmma_f16(PROBE_ARGS) {
  unsigned a0 = word(A, threadIdx.x), a1 = word(A, threadIdx.x + 7), a2 = word(A, threadIdx.x + 13),
           a3 = word(A, threadIdx.x + 17), b0 = word(B, threadIdx.x), b1 = word(B, threadIdx.x + 5);
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  for (int i = 0; i < K; ++i)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  if (d0 + d1 + d2 + d3 == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_hmma_tf32(PROBE_ARGS) {
  unsigned a0 = word(A, threadIdx.x), a1 = word(A, threadIdx.x + 7), a2 = word(A, threadIdx.x + 13),
           a3 = word(A, threadIdx.x + 17), b0 = word(B, threadIdx.x), b1 = word(B, threadIdx.x + 5);
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  for (int i = 0; i < K; ++i)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  if (d0 + d1 + d2 + d3 == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_imma(PROBE_ARGS) {
  unsigned a0 = word(A, threadIdx.x), a1 = word(A, threadIdx.x + 7), a2 = word(A, threadIdx.x + 13),
           a3 = word(A, threadIdx.x + 17), b0 = word(B, threadIdx.x), b1 = word(B, threadIdx.x + 5);
  int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  for (int i = 0; i < K; ++i)
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  if (d0 + d1 + d2 + d3 == 12345) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_qmma_e4m3(PROBE_ARGS) {
  unsigned a0 = word(A, threadIdx.x) & 0x3f3f3f3f, a1 = word(A, threadIdx.x + 7) & 0x3f3f3f3f,
           a2 = word(A, threadIdx.x + 13) & 0x3f3f3f3f, a3 = word(A, threadIdx.x + 17) & 0x3f3f3f3f,
           b0 = word(B, threadIdx.x) & 0x3f3f3f3f, b1 = word(B, threadIdx.x + 5) & 0x3f3f3f3f;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  for (int i = 0; i < K; ++i)
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  if (d0 + d1 + d2 + d3 == 12345.f) C[threadIdx.x] = 1;
}

extern "C" __global__ void k_dmma(PROBE_ARGS) {
  double a = input(A, threadIdx.x), b = input(B, threadIdx.x);
  double d0 = 0, d1 = 0;
  for (int i = 0; i < K; ++i)
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
  if (d0 + d1 == 12345.0) C[threadIdx.x] = 1;
}
