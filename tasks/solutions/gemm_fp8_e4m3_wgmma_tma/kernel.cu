// C = A·Bᵀ (fp8 e4m3 in, fp32 accumulate, bf16 out) on Hopper: a warp-
// specialised, persistent producer/consumer kernel with fp32 promotion.
//
// Hopper's fp8 wgmma adds into its accumulator with reduced precision (about
// 14 mantissa bits, truncating), so chaining every K-step into one
// accumulator misses fp32 accuracy by far at K = 4096 (measured: 0.9% of
// outputs outside atol = rtol = 0.02). Each consumer therefore runs short
// wgmma chains (GEMM_PROMOTE_STEPS K-steps of 32) into a scratch accumulator
// and adds it into an fp32 register accumulator with ordinary FADDs.
// Measured on the H200 at 4096³ (outputs outside tolerance, TFLOP/s):
// every 128 of K 548 / 1042 (cuBLASLt's own output: the same 548), every 64
// of K 0 / 915 (the default), every 32 of K 0 / 696.
//
// One CTA computes a 128×128 tile of C with 3 warpgroups:
//   warpgroup 0     producer: one thread issues TMA loads of A (128×128) and
//                   B (128×128), 128B swizzle, into a ring of kStages slots
//                   guarded by "full" and "empty" mbarriers;
//   warpgroups 1-2  consumers: each owns 64 rows × 128 columns in fp32
//                   registers (64 per thread); wgmma m64n128k32 chains land
//                   in a 64-register scratch accumulator, then promotion.
// The tile is 128 columns rather than 256 because the fp32 accumulator and
// the scratch one must both fit in the 168 registers a 384-thread CTA allows
// (setmaxnreg cannot be relied on: nvJitLink drops it, ptxas C7504).
// Persistent: CTA b walks tiles b, b + gridDim.x, ..., M fastest; the
// producer runs ahead into the next tile while the consumers store.
//
// Launch: grid (min(cdiv(M,128)*cdiv(N,128), 132)), block 384, dynamic shared
// memory 197632 bytes (6 stages of 32 KB and 1 KB to align the ring to 1024
// bytes). Tensor maps (1-byte elements, 128B swizzle): A box [128,128], B box
// [128,128]. K must be a multiple of 128; edges in M and N are masked.
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "../common/tma_mbarrier.cuh"
#include "../common/wgmma_gemm.cuh"

#ifndef GEMM_PROMOTE_STEPS
#define GEMM_PROMOTE_STEPS 2
#endif

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 128;  // 128 fp8 = 128 bytes, one 128B swizzle row
constexpr int kSteps = kBlockK / 32;
constexpr int kPromoteSteps = GEMM_PROMOTE_STEPS;
static_assert(kSteps % kPromoteSteps == 0, "promotion interval must divide the K-steps of a tile");
constexpr int kStages = 6;
constexpr int kConsumers = 2;
constexpr int kThreads = (kConsumers + 1) * 128;
constexpr uint32_t kTileABytes = kBlockM * kBlockK;
constexpr uint32_t kTileBBytes = kBlockN * kBlockK;
constexpr uint32_t kStageBytes = kTileABytes + kTileBBytes;

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

#define WGMMA_REGS64                                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "    \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
  "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

#define WGMMA_ACC64                                                                                   \
  WGMMA_ACC8(0), WGMMA_ACC8(8), WGMMA_ACC8(16), WGMMA_ACC8(24), WGMMA_ACC8(32), WGMMA_ACC8(40),       \
      WGMMA_ACC8(48), WGMMA_ACC8(56)

// d (64×128 fp32, wgmma accumulator layout) = [d +] A(64×32) · B(128×32)ᵀ.
__device__ __forceinline__ void wgmma_m64n128k32(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                 int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " WGMMA_REGS64
               ", %64, %65, p, 1, 1;\n}\n"
               : WGMMA_ACC64
               : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    gemm_fp8_e4m3_wgmma_tma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                            __nv_bfloat16* __restrict__ c, int m_size, int n_size, int k_size) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t full_bar[kStages];
  __shared__ alignas(8) uint64_t empty_bar[kStages];

  // 128B swizzle repeats every 1024 bytes; descriptors assume 1024-aligned tiles.
  const uint32_t tiles = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int warpgroup = threadIdx.x / 128;
  const int k_tiles = k_size / kBlockK;
  const int m_blocks = (m_size + kBlockM - 1) / kBlockM;
  const int tile_count = m_blocks * ((n_size + kBlockN - 1) / kBlockN);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);
      mbar_init(smem_addr(&empty_bar[s]), kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      int it = 0;  // k-tiles issued so far, over all tiles: slot it % kStages
      for (int tile = blockIdx.x; tile < tile_count; tile += gridDim.x) {
        const int m_block = tile % m_blocks, n_block = tile / m_blocks;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % kStages;
          // A fresh barrier counts its (virtual) previous phase as complete,
          // so the first round waits on parity 1 and passes at once.
          mbar_wait(smem_addr(&empty_bar[s]), ((it / kStages) & 1) ^ 1);
          const uint32_t full = smem_addr(&full_bar[s]);
          const uint32_t slot_a = tiles + s * kStageBytes;
          mbar_expect_tx(full, kStageBytes);
          tma_load(slot_a, &a_map, kt * kBlockK, m_block * kBlockM, full);
          tma_load(slot_a + kTileABytes, &b_map, kt * kBlockK, n_block * kBlockN, full);
        }
      }
    }
    return;
  }

  // At most 128·40 + 256·208 registers: see the bf16 kernel of this family.
  asm volatile("setmaxnreg.inc.sync.aligned.u32 208;\n");
  const int consumer = warpgroup - 1;
  const bool leader = threadIdx.x % 128 == 0;
  float acc[64];   // fp32 accumulator, wgmma m64n128 layout
  float part[64];  // short wgmma chains land here before promotion
  int it = 0;
  for (int tile = blockIdx.x; tile < tile_count; tile += gridDim.x) {
    const int m_block = tile % m_blocks, n_block = tile / m_blocks;
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.f;
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int s = it % kStages;
      mbar_wait(smem_addr(&full_bar[s]), (it / kStages) & 1);
      const uint32_t slot_a = tiles + s * kStageBytes + consumer * (64 * 128);
      const uint32_t slot_b = tiles + s * kStageBytes + kTileABytes;
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        if (k % kPromoteSteps == 0) asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        // A K-step of 32 fp8 is 32 bytes along the swizzled row.
        wgmma_m64n128k32(part, smem_desc(slot_a + k * 32), smem_desc(slot_b + k * 32), k % kPromoteSteps != 0);
        if (k % kPromoteSteps == kPromoteSteps - 1) {
          asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
          asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
          for (int i = 0; i < 64; ++i) acc[i] += part[i];
        }
      }
      // The slot has been read: hand it back to the producer.
      if (leader) mbar_arrive(smem_addr(&empty_bar[s]));
    }

    // Accumulator layout of m64nN: thread t of the warpgroup holds, for each
    // 8-column group j, elements 0..1 at row 16*(t/32) + (t%32)/4 and columns
    // 8j + 2*(t%4) + {0,1}, and elements 2..3 eight rows below.
    const int t = threadIdx.x % 128;
    const int row0 = m_block * kBlockM + consumer * 64 + (t / 32) * 16 + (t % 32) / 4;
    const int col0 = n_block * kBlockN + 2 * (t % 4);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = col0 + 8 * j;
      if (col < n_size) {
        if (row0 < m_size) {
          *reinterpret_cast<__nv_bfloat162*>(c + static_cast<size_t>(row0) * n_size + col) =
              __floats2bfloat162_rn(acc[4 * j], acc[4 * j + 1]);
        }
        if (row0 + 8 < m_size) {
          *reinterpret_cast<__nv_bfloat162*>(c + static_cast<size_t>(row0 + 8) * n_size + col) =
              __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
        }
      }
    }
  }
}
