// GEMM with the Ampere-style tensor-core path (cp.async multistage pipeline,
// ldmatrix, mma.sync m16n8k16), parametrised by macros (solution.json):
//
//   GEMM_TYPE   GEMM_BF16 | GEMM_FP16 inputs and output, fp32 accumulation
//   GEMM_NN     0: B is [N, K] (C = A·Bᵀ); 1: B is [K, N] (C = A·B)
//
// The design and its measured variants are tasks/solutions/gemm_bf16_mma_sync
// (the bf16 nt kernel, 373 TFLOP/s at 4096³ on the H200): one CTA computes a
// 128×128 tile with 4 warps (2×2, 64×64 each), K advances in 64-wide tiles
// through a 3-slot ring filled by cp.async.cg, two CTAs per SM.
//
// Shared-memory rows are 128 bytes of K (A, and B when nt) or 256 bytes of N
// (B when nn); 16-byte chunk c of row r is stored at chunk c ^ (r % 8) inside
// its group of eight, so the eight row addresses of every ldmatrix phase hit
// distinct banks. nn reads B with ldmatrix.trans: a K-row-major 8×8 block
// transposed is the "col" operand fragment of mma.sync.
//
// Launch: grid (cdiv(N,128), cdiv(M,128)), block 128, dynamic shared memory
// 98304 bytes. K must be a multiple of 64; M and N may be anything (N a
// multiple of 8): rows past M or N are zero-filled and not stored.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#define GEMM_BF16 0
#define GEMM_FP16 1
#ifndef GEMM_TYPE
#define GEMM_TYPE GEMM_BF16
#endif
#ifndef GEMM_NN
#define GEMM_NN 0
#endif

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 64;
constexpr int kStages = 3;
constexpr int kThreads = 128;
constexpr bool kNN = GEMM_NN;
constexpr uint32_t kTileABytes = kBlockM * kBlockK * 2;
constexpr uint32_t kTileBBytes = kBlockN * kBlockK * 2;
constexpr uint32_t kStageBytes = kTileABytes + kTileBBytes;

#if GEMM_TYPE == GEMM_FP16
using elem = __half;
__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
#define GEMM_MMA_TYPES "f16.f16"
#else
using elem = __nv_bfloat16;
__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
#define GEMM_MMA_TYPES "bf16.bf16"
#endif

// Byte offset of 16-byte chunk `chunk` of row `row` (rows of `row_bytes`).
__device__ __forceinline__ uint32_t swizzled(int row, int chunk, int row_bytes) {
  return row * row_bytes + (((chunk & ~7) | ((chunk ^ row) & 7)) << 4);
}

// Copies 16 bytes, or writes 16 zero bytes when `valid` is false (src-size 0
// reads nothing from `src`).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." GEMM_MMA_TYPES
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Issues the copies of K-tile `kt` into slot `slot`: 1024 chunks of A and
// 1024 of B, 8 and 8 per thread.
__device__ __forceinline__ void load_stage(uint32_t slot, const elem* a, const elem* b, int m0, int n0, int kt,
                                           int m_size, int n_size, int k_size) {
  const int k0 = kt * kBlockK;
#pragma unroll
  for (int i = 0; i < kTileABytes / 16 / kThreads; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    const int row = idx / 8, chunk = idx % 8;
    const bool valid = m0 + row < m_size;
    const elem* src = a + static_cast<size_t>(valid ? m0 + row : 0) * k_size + k0 + chunk * 8;
    cp_async_16(slot + swizzled(row, chunk, 128), src, valid);
  }
#pragma unroll
  for (int i = 0; i < kTileBBytes / 16 / kThreads; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    if constexpr (kNN) {
      // B [K, N]: 64 rows of K, 16 chunks of 8 columns each.
      const int row = idx / 16, chunk = idx % 16;
      const bool valid = n0 + chunk * 8 < n_size;
      const elem* src = b + static_cast<size_t>(k0 + row) * n_size + (valid ? n0 + chunk * 8 : 0);
      cp_async_16(slot + kTileABytes + swizzled(row, chunk, 256), src, valid);
    } else {
      const int row = idx / 8, chunk = idx % 8;
      const bool valid = n0 + row < n_size;
      const elem* src = b + static_cast<size_t>(valid ? n0 + row : 0) * k_size + k0 + chunk * 8;
      cp_async_16(slot + kTileABytes + swizzled(row, chunk, 128), src, valid);
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, 2)
    gemm_mma_sync(const elem* __restrict__ a, const elem* __restrict__ b, elem* __restrict__ c, int m_size,
                  int n_size, int k_size) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t ring = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp % 2, warp_n = warp / 2;
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  const int k_tiles = k_size / kBlockK;

  float acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(ring + s * kStageBytes, a, b, m0, n0, s, m_size, n_size, k_size);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }

  // ldmatrix lane addressing. A (x4 = 16 rows × 16 k): lanes 0-15 give rows
  // 0-15 at k-chunk 0, lanes 16-31 the same rows at k-chunk 1: the a0..a3
  // order of m16n8k16. B nt (x4 = 16 n × 16 k): lanes 0-7 n 0-7 chunk 0, 8-15
  // n 0-7 chunk 1, 16-23 n 8-15 chunk 0, 24-31 n 8-15 chunk 1. B nn (x4.trans
  // of K rows): lanes 0-7 k 0-7 and 8-15 k 8-15 at n 0-7, lanes 16-31 the same
  // at n 8-15. Either way: {b0,b1} of the first n8 block, then of the second.
  const int a_row = warp_m * 64 + (lane % 16);
  const int a_chunk = lane / 16;
  const int b_row = kNN ? (lane & 15) : warp_n * 64 + (lane & 7) + ((lane >> 4) << 3);
  const int b_chunk = kNN ? warp_n * 8 + (lane >> 4) : (lane >> 3) & 1;

  for (int kt = 0; kt < k_tiles; ++kt) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2) : "memory");
    __syncthreads();
    // The slot refilled here was read in iteration kt-1, which every warp has
    // finished (barrier above).
    const int next = kt + kStages - 1;
    if (next < k_tiles)
      load_stage(ring + (next % kStages) * kStageBytes, a, b, m0, n0, next, m_size, n_size, k_size);
    asm volatile("cp.async.commit_group;\n" ::: "memory");

    const uint32_t slot_a = ring + (kt % kStages) * kStageBytes;
    const uint32_t slot_b = slot_a + kTileABytes;
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      uint32_t fa[4][4], fb[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i) ldmatrix_x4(fa[i], slot_a + swizzled(a_row + i * 16, kk * 2 + a_chunk, 128));
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if constexpr (kNN)
          ldmatrix_x4_trans(fb[j], slot_b + swizzled(kk * 16 + b_row, b_chunk + j * 2, 256));
        else
          ldmatrix_x4(fb[j], slot_b + swizzled(b_row + j * 16, kk * 2 + b_chunk, 128));
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) mma_16816(acc[i][j], fa[i], fb[j / 2][(j % 2) * 2], fb[j / 2][(j % 2) * 2 + 1]);
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");

  // Accumulator fragment: acc[i][j][0..1] at row (lane/4), columns 2*(lane%4)
  // + {0,1} of the 16×8 block (i, j); acc[i][j][2..3] eight rows below.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = m0 + warp_m * 64 + i * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int col = n0 + warp_n * 64 + j * 8 + 2 * (lane % 4);
      if (col >= n_size) continue;
      if (row < m_size)
        *reinterpret_cast<uint32_t*>(c + static_cast<size_t>(row) * n_size + col) = pack(acc[i][j][0], acc[i][j][1]);
      if (row + 8 < m_size)
        *reinterpret_cast<uint32_t*>(c + static_cast<size_t>(row + 8) * n_size + col) =
            pack(acc[i][j][2], acc[i][j][3]);
    }
  }
}
