// C = A·Bᵀ (bf16 in, fp32 accumulate, bf16 out) with the Ampere-style tensor
// core path: cp.async multistage pipeline, ldmatrix, mma.sync m16n8k16.
//
// One CTA computes a 128×GEMM_BLOCK_N tile of C with 2·(GEMM_BLOCK_N/64)
// warps; warp w owns the 64×64 sub-tile at rows 64*(w%2), columns 64*(w/2).
// K advances in 64-wide tiles through a ring of GEMM_STAGES shared-memory
// slots filled by cp.async.cg (16 bytes per copy). Rows of a slot are 128
// bytes (64 bf16) made of eight 16-byte chunks; chunk c of row r is stored at
// chunk c ^ (r % 8) so that the eight row addresses of every ldmatrix phase
// hit distinct banks.
//
// Defaults (fastest of the variants measured on the H200, 4096³): 128×128
// tiles, 4 warps, 3 stages (96 KB), two CTAs per SM — 373 TFLOP/s, against
// 344 for 128×256 tiles with 8 warps and 4 stages (one CTA per SM). Loading
// the next K-step's fragments before the current MMAs (GEMM_FRAG_PIPE) made
// no difference.
//
// Launch: grid (cdiv(N,128), cdiv(M,128)), block 128, dynamic shared memory
// 98304 bytes. K must be a multiple of 64; rows of A or B past M or N are
// zero-filled and their outputs not stored.
#include <cuda_bf16.h>

#include <cstdint>

namespace {

#ifndef GEMM_BLOCK_N
#define GEMM_BLOCK_N 128
#endif
#ifndef GEMM_STAGES
#define GEMM_STAGES 3
#endif
#ifndef GEMM_MIN_BLOCKS
#define GEMM_MIN_BLOCKS 2
#endif
#ifndef GEMM_FRAG_PIPE
#define GEMM_FRAG_PIPE 0
#endif

constexpr int kBlockM = 128;
constexpr int kBlockN = GEMM_BLOCK_N;
constexpr int kBlockK = 64;
constexpr int kStages = GEMM_STAGES;
constexpr int kWarpsN = kBlockN / 64;
constexpr int kThreads = 2 * kWarpsN * 32;
constexpr uint32_t kTileABytes = kBlockM * kBlockK * 2;
constexpr uint32_t kTileBBytes = kBlockN * kBlockK * 2;
constexpr uint32_t kStageBytes = kTileABytes + kTileBBytes;

__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
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

__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Issues the copies of K-tile `kt` into slot `slot`: 1024 chunks of A and
// 2048 of B, 4 and 8 per thread.
__device__ __forceinline__ void load_stage(uint32_t slot, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                           int m0, int n0, int kt, int m_size, int n_size, int k_size) {
  const int k0 = kt * kBlockK;
#pragma unroll
  for (int i = 0; i < kTileABytes / 16 / kThreads; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    const int row = idx / 8, chunk = idx % 8;
    const bool valid = m0 + row < m_size;
    const __nv_bfloat16* src = a + static_cast<size_t>(valid ? m0 + row : 0) * k_size + k0 + chunk * 8;
    cp_async_16(slot + swizzled(row, chunk), src, valid);
  }
#pragma unroll
  for (int i = 0; i < kTileBBytes / 16 / kThreads; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    const int row = idx / 8, chunk = idx % 8;
    const bool valid = n0 + row < n_size;
    const __nv_bfloat16* src = b + static_cast<size_t>(valid ? n0 + row : 0) * k_size + k0 + chunk * 8;
    cp_async_16(slot + kTileABytes + swizzled(row, chunk), src, valid);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, GEMM_MIN_BLOCKS)
    gemm_bf16_mma_sync(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                       __nv_bfloat16* __restrict__ c, int m_size, int n_size, int k_size) {
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
  // 0-15 at k-chunk 0, lanes 16-31 the same rows at k-chunk 1, which yields
  // the a0..a3 fragment order of m16n8k16. B (x4 = 16 n × 16 k): lanes 0-7
  // n 0-7 chunk 0, 8-15 n 0-7 chunk 1, 16-23 n 8-15 chunk 0, 24-31 n 8-15
  // chunk 1: {b0,b1} of the first n8 block, then of the second.
  const int a_row = warp_m * 64 + (lane % 16);
  const int a_chunk = lane / 16;
  const int b_row = warp_n * 64 + (lane & 7) + ((lane >> 4) << 3);
  const int b_chunk = (lane >> 3) & 1;

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
#if GEMM_FRAG_PIPE
    // Fragments of step kk+1 are loaded before the MMAs of step kk are issued.
    uint32_t fa[2][4][4], fb[2][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) ldmatrix_x4(fa[0][i], slot_a + swizzled(a_row + i * 16, a_chunk));
#pragma unroll
    for (int j = 0; j < 4; ++j) ldmatrix_x4(fb[0][j], slot_b + swizzled(b_row + j * 16, b_chunk));
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      const int cur = kk % 2, nxt = (kk + 1) % 2;
      if (kk + 1 < kBlockK / 16) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
          ldmatrix_x4(fa[nxt][i], slot_a + swizzled(a_row + i * 16, (kk + 1) * 2 + a_chunk));
#pragma unroll
        for (int j = 0; j < 4; ++j)
          ldmatrix_x4(fb[nxt][j], slot_b + swizzled(b_row + j * 16, (kk + 1) * 2 + b_chunk));
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
          mma_16816(acc[i][j], fa[cur][i], fb[cur][j / 2][(j % 2) * 2], fb[cur][j / 2][(j % 2) * 2 + 1]);
    }
#else
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      uint32_t fa[4][4], fb[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i) ldmatrix_x4(fa[i], slot_a + swizzled(a_row + i * 16, kk * 2 + a_chunk));
#pragma unroll
      for (int j = 0; j < 4; ++j) ldmatrix_x4(fb[j], slot_b + swizzled(b_row + j * 16, kk * 2 + b_chunk));
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) mma_16816(acc[i][j], fa[i], fb[j / 2][(j % 2) * 2], fb[j / 2][(j % 2) * 2 + 1]);
    }
#endif
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
        *reinterpret_cast<__nv_bfloat162*>(c + static_cast<size_t>(row) * n_size + col) =
            __floats2bfloat162_rn(acc[i][j][0], acc[i][j][1]);
      if (row + 8 < m_size)
        *reinterpret_cast<__nv_bfloat162*>(c + static_cast<size_t>(row + 8) * n_size + col) =
            __floats2bfloat162_rn(acc[i][j][2], acc[i][j][3]);
    }
  }
}
