// Attention backward, bf16, for sm_90a: the template of the wgmma backward
// tasks (design in README.md beside this file). Three launches:
//  1. attn_bwd_pre: per query row, Delta = rowsum(dO∘O) and LSE·log2(e) into
//     fp32 scratch, and zeroes the fp32 dQ accumulator.
//  2. attn_bwd_main: one CTA per 128-key block of one (batch, KV head).
//     Warpgroup 0 produces: K and V once, then 64-row blocks of Q, dO (TMA) and
//     their LSE/Delta slices (bulk copies) through a two-stage mbarrier ring.
//     Warpgroups 1 and 2 own 64 keys each and, per query block, compute with
//     wgmma Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ, then Pᵀ and dSᵀ in registers, dV += Pᵀ·dO
//     and dK += dSᵀ·Q (A operands straight from registers), write dSᵀ to shared
//     memory and compute dQ_blk = dS·K, added into the fp32 accumulator with
//     red.global.add.v2.f32 (head dim 128: each warpgroup one 64-column half
//     over all 128 keys; 64: each warpgroup all columns over its own keys).
//  3. attn_bwd_dq: dQ = bf16(scale · accumulator).
//
// Macros: ATTN_HEAD_DIM 64 | 128; ATTN_CAUSAL (query block i starts at the
// key block's diagonal, the two blocks crossing it masked); ATTN_GQA (grid
// [S/128, HKV, B]; the CTA walks the query blocks of all H/HKV query heads of
// its KV head, so dK and dV are summed over the group in registers).
// S is a multiple of 128 (the tasks' constraint).
#include <cstdint>

#ifndef ATTN_HEAD_DIM
#define ATTN_HEAD_DIM 128
#endif
#ifndef ATTN_CAUSAL
#define ATTN_CAUSAL 0
#endif
#ifndef ATTN_GQA
#define ATTN_GQA 0
#endif

#include "../common/hopper_ptx.cuh"
#include "../common/wgmma_ptx.cuh"
#include "attention_bwd_index.cuh"
#include "attention_softmax.cuh"

namespace {
constexpr int kD = ATTN_HEAD_DIM;
constexpr int kKeys = 128;                   // keys per CTA
constexpr int kRows = 64;                    // query rows per step
constexpr int kHalves = kD / 64;             // 64-column boxes per row
constexpr int kKvHalf = kKeys * 64 * 2;      // [128][64] bf16 box, 16 KB
constexpr int kQHalf = kRows * 64 * 2;       // [64][64] bf16 box, 8 KB
constexpr int kSmemK = 0;                    // [halves][128][64]
constexpr int kSmemV = kHalves * kKvHalf;
constexpr int kSmemQ = 2 * kHalves * kKvHalf;       // 2 stages × [halves][64][64]
constexpr int kSmemDO = kSmemQ + 2 * kHalves * kQHalf;
constexpr int kSmemDS = kSmemDO + 2 * kHalves * kQHalf;  // 2 buffers × [128 keys][64 rows]
constexpr int kSmemStat = kSmemDS + 2 * 16384;  // 2 stages × (64 LSE2 + 64 Delta) floats
constexpr int kSmemBar = kSmemStat + 2 * 512;
constexpr int kSharedBytes = kSmemBar + 64 + 1024;  // the manifest's shared_bytes
static_assert(kSharedBytes <= 232448, "shared memory of one CTA");
constexpr int kNO = kD / 2;                  // dK / dV accumulators per thread
// Each warpgroup's dQ block: 64 rows × (half the columns, or all of them).
constexpr int kDqCols = kD == 128 ? 64 : kD;
static_assert(kD == 64 || kD == 128, "head dim 64 or 128");
using cfg = attn::bwd_config<kKeys, kRows, ATTN_CAUSAL, ATTN_GQA>;
using wgmma_s = wgmma_bf16<64, 0, 0>;       // Sᵀ, dPᵀ: 64 keys × 64 rows
using wgmma_acc = wgmma_bf16<kD, 0, 1>;     // dV, dK: 64 keys × D
using wgmma_dq = wgmma_bf16<kDqCols, 1, 1>;
}  // namespace

DEVI void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

DEVI void red_add_v2(float* addr, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(addr), "f"(a), "f"(b) : "memory");
}

DEVI float bf16_lo(uint32_t v) { return __uint_as_float(v << 16); }
DEVI float bf16_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }

// Preprocess: one warp per query row.
extern "C" __global__ void __launch_bounds__(256)
    attn_bwd_pre(const uint16_t* __restrict__ o, const uint16_t* __restrict__ d_o,
                 const float* __restrict__ lse, float* __restrict__ lse2,
                 float* __restrict__ delta, float* __restrict__ dq_acc, int batch, int heads,
                 int seq_len) {
  const int rows = batch * heads * seq_len;
  const int row = blockIdx.x * 8 + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  float acc;
  if constexpr (kD == 128) {
    const uint2 ov = reinterpret_cast<const uint2*>(o + (size_t)row * kD)[lane];
    const uint2 gv = reinterpret_cast<const uint2*>(d_o + (size_t)row * kD)[lane];
    acc = bf16_lo(ov.x) * bf16_lo(gv.x) + bf16_hi(ov.x) * bf16_hi(gv.x) +
          bf16_lo(ov.y) * bf16_lo(gv.y) + bf16_hi(ov.y) * bf16_hi(gv.y);
  } else {
    const uint32_t ov = reinterpret_cast<const uint32_t*>(o + (size_t)row * kD)[lane];
    const uint32_t gv = reinterpret_cast<const uint32_t*>(d_o + (size_t)row * kD)[lane];
    acc = bf16_lo(ov) * bf16_lo(gv) + bf16_hi(ov) * bf16_hi(gv);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) {
    delta[row] = acc;
    lse2[row] = lse[row] * attn::kLog2e;
  }
  if constexpr (kD == 128)
    reinterpret_cast<float4*>(dq_acc + (size_t)row * kD)[lane] = make_float4(0.f, 0.f, 0.f, 0.f);
  else
    reinterpret_cast<float2*>(dq_acc + (size_t)row * kD)[lane] = make_float2(0.f, 0.f);
}

// Convert: dQ = bf16(scale · acc), 8 elements per thread.
extern "C" __global__ void __launch_bounds__(256)
    attn_bwd_dq(const float* __restrict__ dq_acc, uint16_t* __restrict__ dq, float scale,
                int batch, int heads, int seq_len) {
  const size_t rows = (size_t)batch * heads * seq_len;
  const size_t i = (size_t)blockIdx.x * 256 + threadIdx.x;  // 8-element chunk index
  if (i >= rows * (kD / 8)) return;
  const float4 a = reinterpret_cast<const float4*>(dq_acc)[2 * i];
  const float4 b = reinterpret_cast<const float4*>(dq_acc)[2 * i + 1];
  uint4 r;
  r.x = pack_bf16(a.x * scale, a.y * scale);
  r.y = pack_bf16(a.z * scale, a.w * scale);
  r.z = pack_bf16(b.x * scale, b.y * scale);
  r.w = pack_bf16(b.z * scale, b.w * scale);
  reinterpret_cast<uint4*>(dq)[i] = r;
}

#include "attention_bwd_main.cuh"
