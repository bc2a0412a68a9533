// C = A·Bᵀ (bf16 in, fp32 accumulate, bf16 out) on Blackwell (sm_100a) with
// the fifth-generation tensor core instructions.
//
// One CTA (4 warps) computes a 128×256 tile of C; the fp32 accumulator lives
// in tensor memory (256 columns × 128 lanes, allocated with tcgen05.alloc).
//   warp 0, lane 0  producer: TMA loads of A (128×64) and B (256×64), 128B
//                   swizzle, into a ring of kStages slots ("full" mbarriers);
//   warp 1, lane 0  MMA issuer: four tcgen05.mma kind::f16 (M128 N256 K16)
//                   per slot from shared-memory descriptors, then
//                   tcgen05.commit to the slot's "empty" mbarrier so the
//                   producer may refill it once those MMAs have read it; a
//                   last commit signals the "done" mbarrier;
//   all warps       epilogue: warp w reads lanes 32w..32w+31 (rows of the
//                   tile) with tcgen05.ld 32x32b, converts to bf16, stores.
//
// Launch: grid (cdiv(N,256), cdiv(M,128)), block 128, dynamic shared memory
// 197632 bytes. Tensor maps (bf16, 128B swizzle): A box [64,128], B box
// [64,256]. K must be a multiple of 64; edges in M and N are masked.
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "../common/tma_mbarrier.cuh"

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 256;
constexpr int kBlockK = 64;
constexpr int kStages = 4;
constexpr uint32_t kTileABytes = kBlockM * kBlockK * 2;
constexpr uint32_t kTileBBytes = kBlockN * kBlockK * 2;
constexpr uint32_t kStageBytes = kTileABytes + kTileBBytes;
constexpr uint32_t kTmemColumns = kBlockN;  // one fp32 column per output column

// Instruction descriptor of kind::f16: D fp32 (bits 4-5 = 1), A and B bf16
// (bits 7-9 and 10-12 = 1), both K-major (bits 15, 16 = 0), N>>3 at bits
// 17-22, M>>4 at bits 24-28.
constexpr uint32_t kInstrDesc =
    (1u << 4) | (1u << 7) | (1u << 10) | (uint32_t(kBlockN >> 3) << 17) | (uint32_t(kBlockM >> 4) << 24);

// Shared-memory descriptor (tcgen05 layout) of a K-major, 128B-swizzled tile:
// stride byte offset 1024 (8 rows of 128 bytes), the fixed 0b001 at bits
// 46-48, swizzle mode 2 (128B) at bits 61-63.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 46) | (uint64_t(2) << 61);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128, 1)
    gemm_bf16_tcgen05(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                      __nv_bfloat16* __restrict__ c, int m_size, int n_size, int k_size) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t full_bar[kStages];
  __shared__ alignas(8) uint64_t empty_bar[kStages];
  __shared__ alignas(8) uint64_t done_bar;
  __shared__ uint32_t tmem_slot;

  const uint32_t tiles = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m_block = blockIdx.y, n_block = blockIdx.x;
  const int k_tiles = k_size / kBlockK;

  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(smem_addr(&tmem_slot)),
                 "r"(kTmemColumns));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n");
  }
  if (threadIdx.x == 32) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);
      mbar_init(smem_addr(&empty_bar[s]), 1);
    }
    mbar_init(smem_addr(&done_bar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;\n");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n");
  const uint32_t tmem = tmem_slot;

  if (threadIdx.x == 0) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      mbar_wait(smem_addr(&empty_bar[s]), ((kt / kStages) & 1) ^ 1);
      const uint32_t full = smem_addr(&full_bar[s]);
      const uint32_t slot_a = tiles + s * kStageBytes;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(full), "r"(kStageBytes)
                   : "memory");
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
              "r"(slot_a),
          "l"(&a_map), "r"(kt * kBlockK), "r"(m_block * kBlockM), "r"(full)
          : "memory");
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
              "r"(slot_a + kTileABytes),
          "l"(&b_map), "r"(kt * kBlockK), "r"(n_block * kBlockN), "r"(full)
          : "memory");
    }
  } else if (threadIdx.x == 32) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      mbar_wait(smem_addr(&full_bar[s]), (kt / kStages) & 1);
      asm volatile("tcgen05.fence::after_thread_sync;\n");
      const uint32_t slot_a = tiles + s * kStageBytes;
      const uint32_t slot_b = slot_a + kTileABytes;
#pragma unroll
      for (int k = 0; k < kBlockK / 16; ++k) {
        const uint32_t accumulate = (kt > 0 || k > 0) ? 1u : 0u;
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "setp.ne.u32 p, %4, 0;\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n"
            "}\n" ::"r"(tmem),
            "l"(smem_desc(slot_a + k * 32)), "l"(smem_desc(slot_b + k * 32)), "r"(kInstrDesc), "r"(accumulate));
      }
      // Arrives on the slot's empty barrier when the MMAs above have finished
      // reading it.
      asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(
                       smem_addr(&empty_bar[s]))
                   : "memory");
    }
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(
                     smem_addr(&done_bar))
                 : "memory");
  }
  __syncwarp();

  mbar_wait(smem_addr(&done_bar), 0);
  asm volatile("tcgen05.fence::after_thread_sync;\n");
  const int row = m_block * kBlockM + warp * 32 + lane;
#pragma unroll 1
  for (int col0 = 0; col0 < kBlockN; col0 += 32) {
    uint32_t v[32];
    asm volatile(
        "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
        "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
        : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]),
          "=r"(v[8]), "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]),
          "=r"(v[16]), "=r"(v[17]), "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]),
          "=r"(v[24]), "=r"(v[25]), "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
        : "r"(tmem + (static_cast<uint32_t>(warp * 32) << 16) + col0));
    asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
    const int col = n_block * kBlockN + col0;
    if (row < m_size && col < n_size) {
      // 32 consecutive columns of one row: four 16-byte stores.
      uint4* dst = reinterpret_cast<uint4*>(c + static_cast<size_t>(row) * n_size + col);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        uint32_t packed[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          __nv_bfloat162 pair = __floats2bfloat162_rn(__uint_as_float(v[8 * q + 2 * e]),
                                                      __uint_as_float(v[8 * q + 2 * e + 1]));
          packed[e] = *reinterpret_cast<uint32_t*>(&pair);
        }
        dst[q] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
      }
    }
  }

  asm volatile("tcgen05.fence::before_thread_sync;\n");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem), "r"(kTmemColumns));
  }
}
