// GEMM on Blackwell (sm_100a) with tcgen05: the design of
// tasks/solutions/gemm_bf16_tcgen05 (TMA ring, one MMA-issuing thread, fp32
// accumulator in tensor memory, tcgen05.ld epilogue), parametrised by macros:
//
//   GEMM_TYPE      GEMM_BF16 | GEMM_FP16 (kind::f16) | GEMM_E4M3 (kind::f8f6f4)
//                  inputs; output bf16 (fp16 for fp16 inputs)
//   GEMM_NN        1: B is [K, N], read N-major (instruction descriptor bit 16)
//   GEMM_EPILOGUE  GEMM_EPI_NONE | GEMM_EPI_BIAS_GELU
//   GEMM_2CTA      1: a cluster of two CTAs computes a 256×256 tile with
//                  tcgen05.mma.cta_group::2: each CTA loads its 128 rows of A
//                  and half of the tile's B; the pair's leader (rank 0) issues
//                  the MMAs, which read both CTAs' shared memory, and each
//                  CTA's tensor memory holds its own 128 rows
//   GEMM_BATCHED   A [L, M, K], B [L, N, K], C [L, M, N]; blockIdx.z = batch
//   GEMM_GROUPED   A [T, K], B [G, N, K], C [T, N], offsets [G+1]
//
// Launch: block 128; grid (m tiles, cdiv(N,256), L): m tiles cdiv(M,128), or
// 2·cdiv(M,256) with cluster (2,1,1) for GEMM_2CTA, or cdiv(T,128)+G (an upper
// bound; CTAs past the last group's tiles return at once) for GEMM_GROUPED.
// Tensor maps: 128B swizzle, A box [BK, 128], B box [BK, 256] (2-CTA: [BK,
// 128]) or, nn, [64, 64]; BK = 64 elements (128 for fp8). Sizes: M any, N and
// K multiples of 8 (16 for fp8); TMA zero-fills past the edges and the
// epilogue stores whole 8-column chunks inside the bounds.
//
// sm_100a kernels are judged at the compile and SASS level on Hopper
// machines: this template has never run.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../common/tma_mbarrier.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_schedule.cuh"
#include "tcgen05_ops.cuh"

#define GEMM_BF16 0
#define GEMM_FP16 1
#define GEMM_E4M3 2
#ifndef GEMM_TYPE
#define GEMM_TYPE GEMM_BF16
#endif
#ifndef GEMM_NN
#define GEMM_NN 0
#endif
#ifndef GEMM_EPILOGUE
#define GEMM_EPILOGUE GEMM_EPI_NONE
#endif
#ifndef GEMM_2CTA
#define GEMM_2CTA 0
#endif
#ifndef GEMM_BATCHED
#define GEMM_BATCHED 0
#endif
#ifndef GEMM_GROUPED
#define GEMM_GROUPED 0
#endif

namespace {

constexpr bool kFp8 = GEMM_TYPE == GEMM_E4M3;
constexpr bool kNN = GEMM_NN;
constexpr int kCtaGroup = GEMM_2CTA ? 2 : 1;
constexpr int kBlockM = 128;  // rows of A and C per CTA
constexpr int kBlockN = 256;  // columns of the tile (of the pair with 2 CTAs)
constexpr int kRowsB = kBlockN / kCtaGroup;  // rows (nt) or columns (nn) of B each CTA loads
constexpr int kBlockK = kFp8 ? 128 : 64;     // one 128-byte swizzle row
constexpr int kStepK = kFp8 ? 32 : 16;       // K of one MMA
constexpr int kStages = GEMM_2CTA ? 6 : 4;
constexpr uint32_t kTileABytes = kBlockM * 128;
constexpr uint32_t kTileBBytes = kRowsB * 128;
constexpr uint32_t kStageBytes = kTileABytes + kTileBBytes;  // loaded by each CTA
constexpr uint32_t kNChunkBytes = 64 * 128;                   // nn: one [64 K rows × 64 N] box
constexpr uint32_t kTmemColumns = kBlockN;                    // one fp32 column per output column
constexpr uint32_t kInstrDesc =
    tc::instr_desc(kFp8 ? 0 : (GEMM_TYPE == GEMM_BF16 ? 1 : 0), kNN, kBlockM * kCtaGroup, kBlockN);

static_assert(!(kFp8 && kNN), "the fp8 variant reads B K-major");
static_assert(!(GEMM_2CTA && (GEMM_GROUPED || GEMM_BATCHED)), "2-CTA tiles are dense");
static_assert(GEMM_EPILOGUE == GEMM_EPI_NONE || GEMM_EPILOGUE == GEMM_EPI_BIAS_GELU, "epilogues: none, bias_gelu");
static_assert(kStages * kStageBytes + 1024 <= 227 * 1024, "shared memory");

using out_t = gemm::out_type<GEMM_TYPE == GEMM_FP16>;
using out_elem = typename out_t::type;

__device__ __forceinline__ uint64_t desc_a(uint32_t slot, int k) { return tc::smem_desc(slot + k * 32); }
__device__ __forceinline__ uint64_t desc_b(uint32_t slot, int k) {
  if constexpr (kNN) return tc::smem_desc(slot + kTileABytes + k * kStepK * 128, kNChunkBytes);
  return tc::smem_desc(slot + kTileABytes + k * 32);
}

// This CTA's loads of K tile kt into `slot`, completing on `bar` (a
// shared::cluster address: the leader's barrier with 2 CTAs).
__device__ __forceinline__ void load_stage(const CUtensorMap* a_map, const CUtensorMap* b_map, int row0, int b_row,
                                           int b_col, int kt, uint32_t slot, uint32_t bar) {
  auto load = [&](uint32_t dst, const CUtensorMap* map, int c0, int c1) {
    if constexpr (kCtaGroup == 2) tc::tma_load_pair(dst, map, c0, c1, bar);
    else tma_load(dst, map, c0, c1, bar);
  };
  load(slot, a_map, kt * kBlockK, row0);
  if constexpr (kNN) {
#pragma unroll
    for (int c = 0; c < kRowsB / 64; ++c) load(slot + kTileABytes + c * kNChunkBytes, b_map, b_col + c * 64, b_row + kt * kBlockK);
  } else {
    load(slot + kTileABytes, b_map, kt * kBlockK, b_row);
  }
}

// One thread's row of the tile: 32 columns at a time from tensor memory
// (tcgen05.ld is warp-wide: every lane loads, rows past the edge store
// nothing), stored as 16-byte chunks of 8 columns inside [n0, n) (n a
// multiple of 8).
__device__ __forceinline__ void store_row(uint32_t tmem_row, out_elem* c_row, bool row_ok, const out_elem* bias,
                                          int n0, int n) {
#pragma unroll 1
  for (int col0 = 0; col0 < kBlockN; col0 += 32) {
    uint32_t v[32];
    tc::load_32x32(v, tmem_row + col0);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int col = n0 + col0 + 8 * q;
      if (!row_ok || col >= n) continue;
      float f[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) f[e] = __uint_as_float(v[8 * q + e]);
      if constexpr (GEMM_EPILOGUE == GEMM_EPI_BIAS_GELU) {
        const uint4 braw = *reinterpret_cast<const uint4*>(bias + col);
        const uint32_t bw[4] = {braw.x, braw.y, braw.z, braw.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 b = out_t::unpack(bw[e]);
          f[2 * e] = gemm::gelu_tanh(f[2 * e] + b.x);
          f[2 * e + 1] = gemm::gelu_tanh(f[2 * e + 1] + b.y);
        }
      }
      *reinterpret_cast<uint4*>(c_row + col) = make_uint4(out_t::pack(f[0], f[1]), out_t::pack(f[2], f[3]),
                                                          out_t::pack(f[4], f[5]), out_t::pack(f[6], f[7]));
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128, 1)
    gemm_tcgen05(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 out_elem* __restrict__ c,
#if GEMM_EPILOGUE == GEMM_EPI_BIAS_GELU
                 const out_elem* __restrict__ bias,
#endif
#if GEMM_GROUPED
                 const int* __restrict__ offsets, int groups,
#else
                 int m_size,
#endif
                 int n_size, int k_size) {
#if GEMM_EPILOGUE != GEMM_EPI_BIAS_GELU
  constexpr const out_elem* bias = nullptr;
#endif
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t full_bar[kStages];
  __shared__ alignas(8) uint64_t empty_bar[kStages];
  __shared__ alignas(8) uint64_t done_bar;
  __shared__ uint32_t tmem_slot;

  const uint32_t tiles = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t rank = kCtaGroup == 2 ? tc::cluster_rank() : 0;
  const int k_tiles = gemm::cdiv(k_size, kBlockK);
  const int n0 = blockIdx.y * kBlockN;
  // Rows of this CTA in the A/C row space, and the first row of its B tile.
#if GEMM_GROUPED
  int group, mb;
  if (!gemm::grouped_m_tile(offsets, groups, kBlockM, blockIdx.x, &group, &mb)) return;
  const int row0 = offsets[group] + mb * kBlockM, row_end = offsets[group + 1];
  const int b_base = group * (kNN ? k_size : n_size);
#else
  const int batch = GEMM_BATCHED ? blockIdx.z : 0;
  const int row0 = batch * m_size + blockIdx.x * kBlockM, row_end = batch * m_size + m_size;
  const int b_base = batch * (kNN ? k_size : n_size);
#endif
  const int b_col = n0 + rank * kRowsB;                   // nn: first column of this CTA's B
  const int b_row = kNN ? b_base : b_base + b_col;         // nt: first row of this CTA's B

  if (warp == 0) tc::alloc<kCtaGroup>(smem_addr(&tmem_slot), kTmemColumns);
  if (threadIdx.x == 32) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);
      mbar_init(smem_addr(&empty_bar[s]), 1);
    }
    mbar_init(smem_addr(&done_bar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  tc::fence_before_sync();
  // The pair's TMA loads and commits arrive on each other's barriers: every
  // barrier of both CTAs is initialised before either goes on.
  if constexpr (kCtaGroup == 2) tc::cluster_sync();
  else __syncthreads();
  tc::fence_after_sync();
  const uint32_t tmem = tmem_slot;

  if (threadIdx.x == 0) {
    // Producer. With 2 CTAs both load into their own slots and signal the
    // leader's full barrier, on which the leader expects both CTAs' bytes.
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      mbar_wait(smem_addr(&empty_bar[s]), ((kt / kStages) & 1) ^ 1);
      uint32_t full = smem_addr(&full_bar[s]);
      if (rank == 0) mbar_expect_tx(full, kStageBytes * kCtaGroup);
      if constexpr (kCtaGroup == 2) full = tc::map_to_rank(full, 0);
      load_stage(&a_map, &b_map, row0, b_row, b_col, kt, tiles + s * kStageBytes, full);
    }
  } else if (threadIdx.x == 32 && rank == 0) {
    // MMA issuer (the pair's leader with 2 CTAs).
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      mbar_wait(smem_addr(&full_bar[s]), (kt / kStages) & 1);
      tc::fence_after_sync();
      const uint32_t slot = tiles + s * kStageBytes;
#pragma unroll
      for (int k = 0; k < kBlockK / kStepK; ++k)
        tc::mma<kCtaGroup, kFp8>(tmem, desc_a(slot, k), desc_b(slot, k), kInstrDesc, (kt > 0 || k > 0) ? 1u : 0u);
      // Arrives on the slot's empty barrier(s) once these MMAs have read it.
      tc::commit<kCtaGroup>(smem_addr(&empty_bar[s]));
    }
    tc::commit<kCtaGroup>(smem_addr(&done_bar));
  }
  __syncwarp();

  mbar_wait(smem_addr(&done_bar), 0);
  tc::fence_after_sync();
  const int row = row0 + warp * 32 + lane;
  const uint32_t tmem_row = tmem + (static_cast<uint32_t>(warp * 32) << 16);
  store_row(tmem_row, c + static_cast<size_t>(row) * n_size, row < row_end, bias, n0, n_size);

  tc::fence_before_sync();
  if constexpr (kCtaGroup == 2) tc::cluster_sync();
  else __syncthreads();
  if (warp == 0) tc::dealloc<kCtaGroup>(tmem, kTmemColumns);
}
