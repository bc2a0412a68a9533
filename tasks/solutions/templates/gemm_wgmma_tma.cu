// GEMM on Hopper (sm_90a): a persistent, warp-specialised TMA + mbarrier +
// wgmma kernel, parametrised by macros (set per task in solution.json):
//
//   GEMM_TYPE       GEMM_BF16 | GEMM_FP16 | GEMM_E4M3 inputs (output bf16,
//                   fp16 for fp16 inputs)
//   GEMM_NN         0: B is [N, K] (C = A·Bᵀ); 1: B is [K, N] (C = A·B),
//                   read N-major by wgmma (bf16/fp16 only)
//   GEMM_EPILOGUE   GEMM_EPI_NONE | _BIAS | _BIAS_GELU | _ALPHA_BETA | _SCALED
//   GEMM_BATCHED    A [L, M, K], B [L, ...], C [L, M, N]
//   GEMM_GROUPED    A [T, K], B [G, N, K], C [T, N], offsets [G+1] (nt)
//   GEMM_SPLIT_K    K split across CTAs so that skinny (decode) problems fill
//                   the GPU: fp32 partial sums are added atomically into a
//                   zeroed workspace [M, N]; gemm_splitk_finish (a second
//                   launch) rounds it into C
//   GEMM_BLOCK_M    64 (one consumer warpgroup) or 128 (two)
//   GEMM_BLOCK_N    128 or 256
//   GEMM_STAGES     shared-memory ring depth
//   GEMM_GROUP_M    tile raster band (gemm_schedule.cuh; 0: M fastest)
//   GEMM_PROMOTE_STEPS  fp8: K-steps (of 32) per wgmma chain before the
//                   chain is added into the fp32 accumulator (Hopper's fp8
//                   wgmma accumulates with reduced precision)
//
// Roles: warpgroup 0 is the producer (one thread issues the TMA loads of A
// and B into a ring of GEMM_STAGES slots, each guarded by a "full" and an
// "empty" mbarrier); warpgroups 1.. are consumers, 64 rows of the tile each,
// issuing wgmma from the slots and storing their rows with the epilogue.
// Every role derives the same sequence of jobs (tile, K range) from the
// persistent unit index (gemm_schedule.cuh), so no queue is shared.
//
// Sizes: M any (TMA zero-fills rows past the tensor, stores are guarded);
// N a multiple of 8 (16-byte rows for TMA; a column pair is stored whole);
// K a multiple of 8 (16 for fp8): the last K tile is partly out of bounds
// and zero-filled in A and B, so it adds nothing. See README.md for the
// launch configuration of each variant.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../common/tma_mbarrier.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_schedule.cuh"
#include "wgmma_ops.cuh"

#ifndef GEMM_TYPE
#define GEMM_TYPE GEMM_BF16
#endif
#ifndef GEMM_NN
#define GEMM_NN 0
#endif
#ifndef GEMM_EPILOGUE
#define GEMM_EPILOGUE GEMM_EPI_NONE
#endif
#ifndef GEMM_BATCHED
#define GEMM_BATCHED 0
#endif
#ifndef GEMM_GROUPED
#define GEMM_GROUPED 0
#endif
#ifndef GEMM_SPLIT_K
#define GEMM_SPLIT_K 0
#endif
#ifndef GEMM_BLOCK_M
#define GEMM_BLOCK_M 128
#endif
#ifndef GEMM_BLOCK_N
#define GEMM_BLOCK_N 256
#endif
#ifndef GEMM_STAGES
#define GEMM_STAGES 4
#endif
#ifndef GEMM_GROUP_M
#define GEMM_GROUP_M 16
#endif
#ifndef GEMM_PROMOTE_STEPS
#define GEMM_PROMOTE_STEPS 2
#endif

namespace {

constexpr int kIn = GEMM_TYPE;
constexpr bool kFp8 = kIn == GEMM_E4M3;
constexpr bool kNN = GEMM_NN;
constexpr int kEpi = GEMM_EPILOGUE;
constexpr bool kSplitK = GEMM_SPLIT_K;
constexpr int kBlockM = GEMM_BLOCK_M;
constexpr int kBlockN = GEMM_BLOCK_N;
constexpr int kBlockK = kFp8 ? 128 : 64;  // one 128-byte swizzle row of K
constexpr int kStepK = kFp8 ? 32 : 16;    // K of one wgmma
constexpr int kSteps = kBlockK / kStepK;
constexpr int kStages = GEMM_STAGES;
constexpr int kConsumers = kBlockM / 64;
constexpr int kThreads = 128 * (kConsumers + 1);
constexpr uint32_t kTileABytes = kBlockM * 128;
constexpr uint32_t kTileBBytes = kBlockN * 128;
constexpr uint32_t kStageBytes = kTileABytes + kTileBBytes;
constexpr uint32_t kNChunkBytes = 64 * 128;  // nn: one [64 K rows × 64 N] box
constexpr int kAccRegs = kBlockN / 2;
constexpr int kPromoteSteps = GEMM_PROMOTE_STEPS;

static_assert(kBlockM == 64 || kBlockM == 128, "GEMM_BLOCK_M is 64 or 128");
static_assert(!(kFp8 && kNN), "fp8 wgmma reads both operands K-major");
static_assert(!(GEMM_GROUPED && (GEMM_BATCHED || kNN || kSplitK)), "grouped is nt, unbatched, without split-K");
static_assert(!(kSplitK && kEpi != GEMM_EPI_NONE), "split-K finishes without an epilogue");
static_assert(kSteps % kPromoteSteps == 0, "promotion interval must divide the K-steps of a tile");
static_assert(kStages * kStageBytes + 1024 <= 227 * 1024, "shared memory");

using out_t = gemm::out_type<kIn == GEMM_FP16>;
using out_elem = typename out_t::type;

// Loads K tile kt of job j into slot `slot` (A then B), completing on `full`.
// nn: B comes in 64-column chunks, and chunks wholly past N are not loaded
// (their stale shared memory only feeds accumulator columns that are never
// stored; wgmma does not mix columns), so no TMA box lies wholly outside B.
__device__ __forceinline__ void load_stage(const CUtensorMap* a_map, const CUtensorMap* b_map, const gemm::job& j,
                                           int kt, int n_size, uint32_t slot, uint32_t full) {
  if constexpr (kNN) {
    const int chunks = gemm::min_int(kBlockN / 64, gemm::cdiv(n_size - j.n0, 64));
    mbar_expect_tx(full, kTileABytes + chunks * kNChunkBytes);
    tma_load(slot, a_map, kt * kBlockK, j.row0, full);
    for (int c = 0; c < chunks; ++c)
      tma_load(slot + kTileABytes + c * kNChunkBytes, b_map, j.n0 + c * 64, j.b_row + kt * kBlockK, full);
  } else {
    mbar_expect_tx(full, kStageBytes);
    tma_load(slot, a_map, kt * kBlockK, j.row0, full);
    tma_load(slot + kTileABytes, b_map, kt * kBlockK, j.b_row, full);
  }
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Descriptors of K-step k of the slot: this consumer's 64 rows of A and all of B.
__device__ __forceinline__ uint64_t desc_a(uint32_t slot, int consumer, int k) {
  return smem_desc(slot + consumer * (64 * 128) + k * 32);
}
__device__ __forceinline__ uint64_t desc_b(uint32_t slot, int k) {
  if constexpr (kNN) return gemm::smem_desc_mn(slot + kTileABytes + k * kStepK * 128, kNChunkBytes);
  return smem_desc(slot + kTileABytes + k * 32);
}

#if GEMM_TYPE != GEMM_E4M3
// bf16/fp16: one wgmma chain over the job's K range, one K tile in flight
// while the previous slot is handed back.
__device__ __forceinline__ void mma_job(float (&d)[kAccRegs], const gemm::job& j, uint32_t tiles, uint64_t* full_bar,
                                        uint64_t* empty_bar, int consumer, bool leader, int& it) {
  for (int kt = j.kt_begin; kt < j.kt_end; ++kt, ++it) {
    const int s = it % kStages;
    mbar_wait(smem_addr(&full_bar[s]), (it / kStages) & 1);
    const uint32_t slot = tiles + s * kStageBytes;
    gemm::wgmma_fence();
#pragma unroll
    for (int k = 0; k < kSteps; ++k)
      gemm::wgmma_ss<kIn, kBlockN, kNN>(d, desc_a(slot, consumer, k), desc_b(slot, k), kt > j.kt_begin || k > 0);
    gemm::wgmma_commit();
    gemm::wgmma_wait<1>();
    if (kt > j.kt_begin && leader) mbar_arrive(smem_addr(&empty_bar[(it - 1) % kStages]));
  }
  gemm::wgmma_wait<0>();
  if (leader) mbar_arrive(smem_addr(&empty_bar[(it - 1) % kStages]));
}

#else
// fp8: chains of kPromoteSteps wgmmas into `part`, each added into the fp32
// accumulator `acc` (measured on the H200 at 4096³: one chain over all of K
// left 0.9% of outputs outside atol = rtol = 0.02; every 64 of K, none).
__device__ __forceinline__ void mma_job_fp8(float (&acc)[kAccRegs], float (&part)[kAccRegs], const gemm::job& j,
                                            uint32_t tiles, uint64_t* full_bar, uint64_t* empty_bar, int consumer,
                                            bool leader, int& it) {
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.f;
  for (int kt = j.kt_begin; kt < j.kt_end; ++kt, ++it) {
    const int s = it % kStages;
    mbar_wait(smem_addr(&full_bar[s]), (it / kStages) & 1);
    const uint32_t slot = tiles + s * kStageBytes;
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      if (k % kPromoteSteps == 0) gemm::wgmma_fence();
      gemm::wgmma_ss<kIn, kBlockN, 0>(part, desc_a(slot, consumer, k), desc_b(slot, k), k % kPromoteSteps != 0);
      if (k % kPromoteSteps == kPromoteSteps - 1) {
        gemm::wgmma_commit();
        gemm::wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) acc[i] += part[i];
      }
    }
    if (leader) mbar_arrive(smem_addr(&empty_bar[s]));
  }
}
#endif

#if GEMM_GROUPED
constexpr int kMaxGroups = 256;

// Warp 1 computes tile_prefix (gemm_schedule.cuh) with a warp scan, 32 groups at a time.
__device__ __forceinline__ void group_tile_prefix_warp(const gemm::grouped_shape& shape, const int* offsets,
                                                       int* tile_prefix) {
  const int lane = threadIdx.x % 32;
  int carry = 0;
  if (lane == 0) tile_prefix[0] = 0;
  for (int base = 0; base < shape.groups; base += 32) {
    const int g = base + lane;
    int v = g < shape.groups ? gemm::group_tiles(shape, offsets[g + 1] - offsets[g]) : 0;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int y = __shfl_up_sync(0xffffffffu, v, o);
      if (lane >= o) v += y;
    }
    if (g < shape.groups) tile_prefix[g + 1] = carry + v;
    carry += __shfl_sync(0xffffffffu, v, 31);
  }
}
#endif

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_tma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
#if GEMM_SPLIT_K
                   float* __restrict__ workspace,
#else
                   out_elem* __restrict__ c,
#endif
#if GEMM_EPILOGUE == GEMM_EPI_BIAS || GEMM_EPILOGUE == GEMM_EPI_BIAS_GELU
                   const out_elem* __restrict__ bias,
#elif GEMM_EPILOGUE == GEMM_EPI_ALPHA_BETA
                   const out_elem* __restrict__ c_in, float alpha, float beta,
#elif GEMM_EPILOGUE == GEMM_EPI_SCALED
                   float scale_a, float scale_b,
#endif
#if GEMM_GROUPED
                   const int* __restrict__ offsets, int groups,
#else
                   int m_size,
#endif
#if GEMM_BATCHED
                   int n_size, int k_size, int batches) {
#else
                   int n_size, int k_size) {
  [[maybe_unused]] constexpr int batches = 1;
#endif
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t full_bar[kStages];
  __shared__ alignas(8) uint64_t empty_bar[kStages];
  // 128B swizzle repeats every 1024 bytes; descriptors assume 1024-aligned tiles.
  const uint32_t tiles = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int warpgroup = threadIdx.x / 128;

#if GEMM_GROUPED
  __shared__ int tile_prefix[kMaxGroups + 1];
  const gemm::grouped_shape shape{groups, n_size, k_size, kBlockM, kBlockN, kBlockK};
  if (groups < 1 || groups > kMaxGroups) __trap();  // the tasks have 1 to 64 groups
  if (threadIdx.x / 32 == 1) group_tile_prefix_warp(shape, offsets, tile_prefix);
#else
  gemm::dense_shape shape{m_size, n_size, k_size, batches, kBlockM, kBlockN, kBlockK, GEMM_GROUP_M, 1, kNN};
  if (kSplitK)
    shape.splits = gemm::split_count(gemm::dense_tiles(shape) * batches, gemm::cdiv(k_size, kBlockK), gridDim.x);
#endif
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);
      mbar_init(smem_addr(&empty_bar[s]), kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
#if GEMM_GROUPED
  const int units = tile_prefix[groups];
  auto job_of = [&](int unit, int* cursor) { return gemm::grouped_job(shape, offsets, tile_prefix, unit, cursor); };
#else
  const int units = gemm::dense_units(shape);
  auto job_of = [&](int unit, int*) { return gemm::dense_job(shape, unit); };
#endif

  if (warpgroup == 0) {
    // The register pool is what the launch allocated (compiled count × threads):
    // ask for no more than 128·40 + 256·208 = 384·152, which any count ≥ 152
    // covers. One consumer needs no reallocation.
    if constexpr (kConsumers > 1) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      int it = 0, cursor = 0;  // it: K tiles issued over all jobs, slot it % kStages
      for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const gemm::job j = job_of(unit, &cursor);
        for (int kt = j.kt_begin; kt < j.kt_end; ++kt, ++it) {
          const int s = it % kStages;
          // A fresh barrier counts its (virtual) previous phase as complete,
          // so the first round waits on parity 1 and passes at once.
          mbar_wait(smem_addr(&empty_bar[s]), ((it / kStages) & 1) ^ 1);
          load_stage(&a_map, &b_map, j, kt, n_size, tiles + s * kStageBytes, smem_addr(&full_bar[s]));
        }
      }
    }
    return;
  }

  if constexpr (kConsumers > 1) asm volatile("setmaxnreg.inc.sync.aligned.u32 208;\n");
  const int consumer = warpgroup - 1;
  const bool leader = threadIdx.x % 128 == 0;
  gemm::epilogue_args<out_elem> e;
#if GEMM_EPILOGUE == GEMM_EPI_BIAS || GEMM_EPILOGUE == GEMM_EPI_BIAS_GELU
  e.bias = bias;
#elif GEMM_EPILOGUE == GEMM_EPI_ALPHA_BETA
  e.c_in = c_in;
  e.alpha = alpha;
  e.beta = beta;
#elif GEMM_EPILOGUE == GEMM_EPI_SCALED
  e.scale = scale_a * scale_b;
#endif
#if GEMM_SPLIT_K
  out_elem* const c = nullptr;
#else
  float* const workspace = nullptr;
#endif
  float d[kAccRegs];
#if GEMM_TYPE == GEMM_E4M3
  float part[kAccRegs];
#endif
  int it = 0, cursor = 0;
  for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const gemm::job j = job_of(unit, &cursor);
#if GEMM_TYPE == GEMM_E4M3
    mma_job_fp8(d, part, j, tiles, full_bar, empty_bar, consumer, leader, it);
#else
    mma_job(d, j, tiles, full_bar, empty_bar, consumer, leader, it);
#endif
    gemm::store_warpgroup_tile<kEpi, kSplitK, out_t>(d, c, workspace, e, j.row0 + consumer * 64, j.row_end, j.n0,
                                                     n_size);
  }
}

#if GEMM_SPLIT_K
// Rounds the fp32 workspace [M, N] (the sum of every split) into C; 8
// elements per thread (M·N is a multiple of 8 since N is). Grid cdiv(M·N, 2048).
extern "C" __global__ void __launch_bounds__(256)
    gemm_splitk_finish(const float* __restrict__ workspace, out_elem* __restrict__ c, int m_size, int n_size) {
  const size_t i = (size_t(blockIdx.x) * 256 + threadIdx.x) * 8;
  if (i >= size_t(m_size) * size_t(n_size)) return;
  const float4 lo = *reinterpret_cast<const float4*>(workspace + i);
  const float4 hi = *reinterpret_cast<const float4*>(workspace + i + 4);
  *reinterpret_cast<uint4*>(c + i) =
      make_uint4(out_t::pack(lo.x, lo.y), out_t::pack(lo.z, lo.w), out_t::pack(hi.x, hi.y), out_t::pack(hi.z, hi.w));
}
#endif
