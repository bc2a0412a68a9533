// C = A·Bᵀ (bf16 in, fp32 accumulate, bf16 out) on Hopper: a warp-specialised
// producer/consumer kernel.
//
// One CTA computes a 128×256 tile of C with 3 warpgroups:
//   warpgroup 0  producer: gives registers back (setmaxnreg.dec) and one thread
//                issues TMA loads of A (128×64) and B (256×64) into a ring of
//                kStages shared-memory slots, each slot guarded by a "full" and
//                an "empty" mbarrier;
//   warpgroups 1, 2  consumers: take registers (setmaxnreg.inc), each owns
//                64 rows of the tile and issues wgmma m64n256k16 from 128B-
//                swizzled shared memory, then stores its bf16 rows of C.
// The kernel is persistent (GEMM_PERSISTENT, default 1): each CTA walks tiles
// tile = blockIdx.x, += gridDim.x, and the producer runs ahead into the next
// tile while the consumers store the last one.
// With GEMM_CLUSTER_M == 2 (default 1: measured slower on the H200, 441 vs 698
// TFLOP/s at 4096³), two CTAs stacked along M form a cluster: each loads half
// of the shared B tile and multicasts it to both. A CTA whose rows lie past M
// still takes part (its A loads are zero-filled by TMA and its stores are
// skipped), so the grid along M is rounded up to a whole cluster.
//
// Launch (defaults): grid (min(cdiv(M,128)*cdiv(N,256), 132)), block 384,
// dynamic shared memory 197632 bytes (4 stages of 48 KB and 1 KB to align the
// ring to 1024 bytes). Tensor maps (bf16, 128B swizzle): A box [64,128],
// B box [64,256] ([64,128], the half each CTA loads, with clusters).
// K must be a multiple of 64; M and N may be anything (edges are masked).
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "../common/tma_mbarrier.cuh"
#include "../common/wgmma_gemm.cuh"

#ifndef GEMM_CLUSTER_M
#define GEMM_CLUSTER_M 1
#endif
#ifndef GEMM_PERSISTENT
#define GEMM_PERSISTENT 1
#endif

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 256;
constexpr int kBlockK = 64;  // 64 bf16 = 128 bytes, one 128B swizzle row
constexpr int kStages = 4;
constexpr int kConsumers = 2;
constexpr int kClusterM = GEMM_CLUSTER_M;
constexpr uint32_t kTileABytes = kBlockM * kBlockK * 2;
constexpr uint32_t kTileBBytes = kBlockN * kBlockK * 2;
constexpr uint32_t kStageBytes = kTileABytes + kTileBBytes;
constexpr uint32_t kBoxBRows = kBlockN / kClusterM;  // rows of B each CTA loads

// Arrives on the barrier at the same shared-memory offset in CTA `rank` of
// the cluster (the own CTA included).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}

__device__ __forceinline__ void mbar_arrive_local(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Hands a ring slot back: its empty barrier in every CTA of the cluster
// counts this consumer warpgroup, since every CTA's producer writes into it.
__device__ __forceinline__ void release_slot(uint32_t empty_bar) {
  if (kClusterM > 1) {
    for (int r = 0; r < kClusterM; ++r) mbar_arrive_cluster(empty_bar, r);
  } else {
    mbar_arrive_local(empty_bar);
  }
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ void tma_load_multicast(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                                   uint32_t bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
      : "memory");
}

#define WGMMA_REGS128                                                                                         \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "    \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
  "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, " \
  "%85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, " \
  "%105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, "    \
  "%122, %123, %124, %125, %126, %127}"

#define WGMMA_ACC128                                                                                        \
  WGMMA_ACC8(0), WGMMA_ACC8(8), WGMMA_ACC8(16), WGMMA_ACC8(24), WGMMA_ACC8(32), WGMMA_ACC8(40),             \
      WGMMA_ACC8(48), WGMMA_ACC8(56), WGMMA_ACC8(64), WGMMA_ACC8(72), WGMMA_ACC8(80), WGMMA_ACC8(88),       \
      WGMMA_ACC8(96), WGMMA_ACC8(104), WGMMA_ACC8(112), WGMMA_ACC8(120)

// d (64×256 fp32, wgmma accumulator layout) += A(64×16) · B(256×16)ᵀ.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                 int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WGMMA_REGS128
               ", %128, %129, p, 1, 1, 0, 0;\n}\n"
               : WGMMA_ACC128
               : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(384, 1)
    gemm_bf16_wgmma_tma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                        __nv_bfloat16* __restrict__ c, int m_size, int n_size, int k_size) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t full_bar[kStages];
  __shared__ alignas(8) uint64_t empty_bar[kStages];

  // 128B swizzle repeats every 1024 bytes; descriptors assume 1024-aligned tiles.
  const uint32_t tiles = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int warpgroup = threadIdx.x / 128;
  const int k_tiles = k_size / kBlockK;
  uint32_t cta_rank = 0;
  if (kClusterM > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(cta_rank));

  // Work is counted in cluster tiles (kClusterM·128 rows × 256 columns), M
  // fastest so that clusters running together share B tiles in L2. Both CTAs
  // of a cluster walk the same sequence, so their pipelines stay paired.
  const int cluster_rows = (m_size + kBlockM * kClusterM - 1) / (kBlockM * kClusterM);
  const int cluster_tiles = cluster_rows * ((n_size + kBlockN - 1) / kBlockN);
#if GEMM_PERSISTENT
  const int first_tile = blockIdx.x / kClusterM;
  const int tile_stride = gridDim.x / kClusterM;
#else
  const int first_tile = blockIdx.y * cluster_rows + blockIdx.x / kClusterM;
  const int tile_stride = cluster_tiles;
#endif

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);
      mbar_init(smem_addr(&empty_bar[s]), kConsumers * kClusterM);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  // Peers multicast into this CTA's slots and arrive on its barriers: they
  // must all be initialised first.
  if (kClusterM > 1) cluster_sync();
  else __syncthreads();

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      int it = 0;  // k-steps issued so far, over all tiles: slot it % kStages
      for (int tile = first_tile; tile < cluster_tiles; tile += tile_stride) {
        const int m_block = (tile % cluster_rows) * kClusterM + cta_rank;
        const int n_block = tile / cluster_rows;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % kStages;
          // A fresh barrier counts its (virtual) previous phase as complete,
          // so the first round waits on parity 1 and passes at once.
          mbar_wait(smem_addr(&empty_bar[s]), ((it / kStages) & 1) ^ 1);
          const uint32_t full = smem_addr(&full_bar[s]);
          const uint32_t slot_a = tiles + s * kStageBytes;
          const uint32_t slot_b = slot_a + kTileABytes;
          mbar_expect_tx(full, kStageBytes);
          tma_load(slot_a, &a_map, kt * kBlockK, m_block * kBlockM, full);
          if (kClusterM > 1) {
            tma_load_multicast(slot_b + cta_rank * kBoxBRows * 128, &b_map, kt * kBlockK,
                               n_block * kBlockN + cta_rank * kBoxBRows, full, (1u << kClusterM) - 1);
          } else {
            tma_load(slot_b, &b_map, kt * kBlockK, n_block * kBlockN, full);
          }
        }
      }
    }
  } else {
    // The CTA's register pool is what the launch allocated (the compiled
    // register count, rounded up to 8, times 384 threads), which may be
    // fewer than the 168 the launch bounds permit (154 was seen), so ask for
    // no more than 128·40 + 256·208 (= 384·152) and never wait on registers
    // that do not exist. (nvJitLink compiles PTX as relocatable code and
    // drops setmaxnreg altogether, ptxas C7504; the kernel fits 168 anyway.)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 208;\n");
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % 128 == 0;
    float d[128];
    int it = 0;
    for (int tile = first_tile; tile < cluster_tiles; tile += tile_stride) {
      const int m_block = (tile % cluster_rows) * kClusterM + cta_rank;
      const int n_block = tile / cluster_rows;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % kStages;
        mbar_wait(smem_addr(&full_bar[s]), (it / kStages) & 1);
        const uint32_t slot_a = tiles + s * kStageBytes + consumer * (64 * 128);
        const uint32_t slot_b = tiles + s * kStageBytes + kTileABytes;
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int k = 0; k < kBlockK / 16; ++k) {
          // A K-step of 16 bf16 is 32 bytes along the swizzled row; the
          // tile's first step overwrites the accumulator.
          wgmma_m64n256k16(d, smem_desc(slot_a + k * 32), smem_desc(slot_b + k * 32), kt > 0 || k > 0);
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        // Keep this step's wgmmas in flight; the previous step's are done
        // now and its slot can be handed back to the producer(s).
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        if (kt > 0 && leader) release_slot(smem_addr(&empty_bar[(it - 1) % kStages]));
      }
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      if (k_tiles > 0 && leader) release_slot(smem_addr(&empty_bar[(it - 1) % kStages]));

      // Accumulator layout of m64nN: thread t of the warpgroup holds, for
      // each 8-column group j, d[4j..4j+1] at row 16*(t/32) + (t%32)/4 and
      // columns 8j + 2*(t%4) + {0,1}, and d[4j+2..4j+3] eight rows below.
      const int t = threadIdx.x % 128;
      const int row0 = m_block * kBlockM + consumer * 64 + (t / 32) * 16 + (t % 32) / 4;
      const int col0 = n_block * kBlockN + 2 * (t % 4);
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int col = col0 + 8 * j;
        if (col < n_size) {
          if (row0 < m_size) {
            *reinterpret_cast<__nv_bfloat162*>(c + static_cast<size_t>(row0) * n_size + col) =
                __floats2bfloat162_rn(d[4 * j], d[4 * j + 1]);
          }
          if (row0 + 8 < m_size) {
            *reinterpret_cast<__nv_bfloat162*>(c + static_cast<size_t>(row0 + 8) * n_size + col) =
                __floats2bfloat162_rn(d[4 * j + 2], d[4 * j + 3]);
          }
        }
      }
    }
  }
  // A peer may still arrive on this CTA's barriers: leave together.
  if (kClusterM > 1) cluster_sync();
}
