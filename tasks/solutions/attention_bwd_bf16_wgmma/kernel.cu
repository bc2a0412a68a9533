// Attention backward, bf16, non-causal, head dim 128, for sm_90a.
//
// Three launches:
//  1. attn_bwd_pre: per query row, Delta = rowsum(dO∘O) and LSE·log2(e) into
//     fp32 scratch, and zeroes the fp32 dQ accumulator.
//  2. attn_bwd_main: one CTA per 128-key block of one (batch, head). Warpgroup 0
//     produces: K and V once, then 64-row blocks of Q, dO (TMA) and their
//     LSE/Delta slices (bulk copies) through a two-stage mbarrier ring.
//     Warpgroups 1 and 2 own 64 keys each and, per query block, compute with
//     wgmma Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ, then Pᵀ and dSᵀ in registers, dV += Pᵀ·dO
//     and dK += dSᵀ·Q (A operands straight from registers), write dSᵀ to shared
//     memory, and after a barrier each computes half the columns of
//     dQ_blk = dS·K, added into the fp32 accumulator with red.global.add.v2.f32.
//  3. attn_bwd_dq: dQ = bf16(scale · accumulator).
//
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -ptx kernel.cu
#include <cstdint>

#include "../common/hopper_ptx.cuh"
#include "../common/attention_ptx.cuh"

// D (+)= A·B, A and B from shared memory (descriptors); 64x64x16, bf16 in, f32 accumulate.
template <int TA, int TB>
DEVI void wgmma_m64n64k16_ss(float (&d)[32], uint64_t da, uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, %35, %36;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB));
}

namespace {
constexpr int kKeys = 128;                   // keys per CTA
constexpr int kRows = 64;                    // query rows per step
constexpr int kKvHalf = 128 * 64 * 2;        // [128][64] bf16 box, 16 KB
constexpr int kQHalf = 64 * 64 * 2;          // [64][64] bf16 box, 8 KB
constexpr int kSmemK = 0;                    // [2 halves][128][64]
constexpr int kSmemV = 2 * kKvHalf;
constexpr int kSmemQ = 4 * kKvHalf;          // 2 stages × [2 halves][64][64]
constexpr int kSmemDO = kSmemQ + 4 * kQHalf;
constexpr int kSmemDS = kSmemDO + 4 * kQHalf;  // 2 buffers × [128 keys][64 rows]
constexpr int kSmemStat = kSmemDS + 2 * 16384;  // 2 stages × (64 LSE2 + 64 Delta) floats
constexpr int kSmemBar = kSmemStat + 2 * 512;
constexpr float kLog2e = 1.4426950408889634f;
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
  const uint2 ov = reinterpret_cast<const uint2*>(o + (size_t)row * 128)[lane];
  const uint2 gv = reinterpret_cast<const uint2*>(d_o + (size_t)row * 128)[lane];
  auto lo = [](uint32_t v) { return __uint_as_float(v << 16); };
  auto hi = [](uint32_t v) { return __uint_as_float(v & 0xffff0000u); };
  float acc = lo(ov.x) * lo(gv.x) + hi(ov.x) * hi(gv.x) + lo(ov.y) * lo(gv.y) + hi(ov.y) * hi(gv.y);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) {
    delta[row] = acc;
    lse2[row] = lse[row] * kLog2e;
  }
  reinterpret_cast<float4*>(dq_acc + (size_t)row * 128)[lane] = make_float4(0.f, 0.f, 0.f, 0.f);
}

// Convert: dQ = bf16(scale · acc), 8 elements per thread.
extern "C" __global__ void __launch_bounds__(256)
    attn_bwd_dq(const float* __restrict__ dq_acc, uint16_t* __restrict__ dq, float scale,
                int batch, int heads, int seq_len) {
  const size_t rows = (size_t)batch * heads * seq_len;
  const size_t i = (size_t)blockIdx.x * 256 + threadIdx.x;  // 8-element chunk index
  if (i >= rows * 16) return;
  const float4 a = reinterpret_cast<const float4*>(dq_acc)[2 * i];
  const float4 b = reinterpret_cast<const float4*>(dq_acc)[2 * i + 1];
  uint4 r;
  r.x = pack_bf16(a.x * scale, a.y * scale);
  r.y = pack_bf16(a.z * scale, a.w * scale);
  r.z = pack_bf16(b.x * scale, b.y * scale);
  r.w = pack_bf16(b.z * scale, b.w * scale);
  reinterpret_cast<uint4*>(dq)[i] = r;
}

extern "C" __global__ void __launch_bounds__(384, 1)
    attn_bwd_main(const __grid_constant__ tensor_map_t map_q,
                  const __grid_constant__ tensor_map_t map_k,
                  const __grid_constant__ tensor_map_t map_v,
                  const __grid_constant__ tensor_map_t map_do, const float* __restrict__ lse2,
                  const float* __restrict__ delta, float* __restrict__ dq_acc,
                  uint16_t* __restrict__ dk, uint16_t* __restrict__ dv, int seq_len,
                  float scale) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~uintptr_t(1023));
  const uint32_t base = smem_u32(smem);
  const uint32_t bar_kv = base + kSmemBar;
  const uint32_t bar_full = bar_kv + 8;    // [2]
  const uint32_t bar_empty = bar_kv + 24;  // [2]

  const int bh = blockIdx.y;
  const int n_blk = blockIdx.x;
  const int row0 = bh * seq_len;
  const int n_q = seq_len / kRows;

  if (threadIdx.x == 0) {
    mbar_init(bar_kv, 1);
    for (int s = 0; s < 2; ++s) {
      mbar_init(bar_full + 8 * s, 1);
      mbar_init(bar_empty + 8 * s, 256);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
    if (threadIdx.x == 0) {
      const int krow = row0 + n_blk * kKeys;
      mbar_expect_tx(bar_kv, 4 * kKvHalf);
      tma_load_2d(base + kSmemK, &map_k, bar_kv, 0, krow);
      tma_load_2d(base + kSmemK + kKvHalf, &map_k, bar_kv, 64, krow);
      tma_load_2d(base + kSmemV, &map_v, bar_kv, 0, krow);
      tma_load_2d(base + kSmemV + kKvHalf, &map_v, bar_kv, 64, krow);
      for (int i = 0; i < n_q; ++i) {
        const int s = i & 1;
        if (i >= 2) mbar_wait(bar_empty + 8 * s, ((i >> 1) & 1) ^ 1);
        const uint32_t bar = bar_full + 8 * s;
        const int qrow = row0 + i * kRows;
        mbar_expect_tx(bar, 4 * kQHalf + 512);
        const uint32_t q = base + kSmemQ + s * 2 * kQHalf;
        const uint32_t g = base + kSmemDO + s * 2 * kQHalf;
        tma_load_2d(q, &map_q, bar, 0, qrow);
        tma_load_2d(q + kQHalf, &map_q, bar, 64, qrow);
        tma_load_2d(g, &map_do, bar, 0, qrow);
        tma_load_2d(g + kQHalf, &map_do, bar, 64, qrow);
        const uint32_t st = base + kSmemStat + s * 512;
        bulk_load(st, lse2 + qrow, 256, bar);
        bulk_load(st + 256, delta + qrow, 256, bar);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    const int tid = threadIdx.x - 128;
    const int wg = tid >> 7;
    const int warp = (tid >> 5) & 3;
    const int lane = tid & 31;
    const int c2 = 2 * (lane & 3);
    const int kr = wg * 64 + warp * 16 + (lane >> 2);  // key row in the block; kr + 8 too
    const float scale_log2 = scale * kLog2e;
    const float* stat = reinterpret_cast<const float*>(smem + kSmemStat);

    float dv_acc[64], dk_acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) dv_acc[i] = dk_acc[i] = 0.f;
    float s[32], dp[32], dq[32];
    uint32_t p_frag[16], ds_frag[16];

    const uint32_t k_wg = base + kSmemK + wg * 8192;  // this warpgroup's 64 keys (A operand)
    const uint32_t v_wg = base + kSmemV + wg * 8192;
    mbar_wait(bar_kv, 0);

    for (int i = 0; i < n_q; ++i) {
      const int st = i & 1;
      const uint32_t q_s = base + kSmemQ + st * 2 * kQHalf;
      const uint32_t g_s = base + kSmemDO + st * 2 * kQHalf;
      const uint32_t ds_s = base + kSmemDS + st * 16384;
      mbar_wait(bar_full + 8 * st, (i >> 1) & 1);

      // Sᵀ = K_wg · Qᵀ and dPᵀ = V_wg · dOᵀ (64 keys × 64 rows each).
      fence_regs(s);
      fence_regs(dp);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const uint32_t ka = (kk >> 2) * kKvHalf + (kk & 3) * 32;
        const uint32_t kb = (kk >> 2) * kQHalf + (kk & 3) * 32;
        wgmma_m64n64k16_ss<0, 0>(s, make_desc(k_wg + ka, 16, 1024), make_desc(q_s + kb, 16, 1024),
                                 kk > 0);
      }
      wgmma_commit();
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const uint32_t ka = (kk >> 2) * kKvHalf + (kk & 3) * 32;
        const uint32_t kb = (kk >> 2) * kQHalf + (kk & 3) * 32;
        wgmma_m64n64k16_ss<0, 0>(dp, make_desc(v_wg + ka, 16, 1024),
                                 make_desc(g_s + kb, 16, 1024), kk > 0);
      }
      wgmma_commit();
      wgmma_wait<1>();
      fence_regs(s);

      // Pᵀ = exp2(S·scale·log2e − LSE·log2e); columns are query rows.
      const float* l2 = stat + st * 128;
      const float* dl = l2 + 64;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float la = l2[8 * j + c2], lb = l2[8 * j + c2 + 1];
        s[4 * j] = ex2(fmaf(s[4 * j], scale_log2, -la));
        s[4 * j + 1] = ex2(fmaf(s[4 * j + 1], scale_log2, -lb));
        s[4 * j + 2] = ex2(fmaf(s[4 * j + 2], scale_log2, -la));
        s[4 * j + 3] = ex2(fmaf(s[4 * j + 3], scale_log2, -lb));
      }
#pragma unroll
      for (int q = 0; q < 16; ++q) p_frag[q] = pack_bf16(s[2 * q], s[2 * q + 1]);
      wgmma_wait<0>();
      fence_regs(dp);

      // dSᵀ = Pᵀ ∘ (dPᵀ − Delta).
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float da = dl[8 * j + c2], db = dl[8 * j + c2 + 1];
        dp[4 * j] = s[4 * j] * (dp[4 * j] - da);
        dp[4 * j + 1] = s[4 * j + 1] * (dp[4 * j + 1] - db);
        dp[4 * j + 2] = s[4 * j + 2] * (dp[4 * j + 2] - da);
        dp[4 * j + 3] = s[4 * j + 3] * (dp[4 * j + 3] - db);
      }
#pragma unroll
      for (int q = 0; q < 16; ++q) ds_frag[q] = pack_bf16(dp[2 * q], dp[2 * q + 1]);

      // dV += Pᵀ·dO, dK += dSᵀ·Q (A from registers, B N-major in shared memory).
      fence_regs(dv_acc);
      fence_regs(dk_acc);
      fence_regs(p_frag);
      fence_regs(ds_frag);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const uint32_t a[4] = {p_frag[4 * kk], p_frag[4 * kk + 1], p_frag[4 * kk + 2],
                               p_frag[4 * kk + 3]};
        wgmma_m64n128k16_rs<1>(dv_acc, a, make_desc(g_s + kk * 2048, kQHalf, 1024));
      }
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const uint32_t a[4] = {ds_frag[4 * kk], ds_frag[4 * kk + 1], ds_frag[4 * kk + 2],
                               ds_frag[4 * kk + 3]};
        wgmma_m64n128k16_rs<1>(dk_acc, a, make_desc(q_s + kk * 2048, kQHalf, 1024));
      }
      wgmma_commit();

      // dSᵀ to shared memory, [128 keys][64 rows] bf16 with the 128-byte swizzle.
      {
        uint8_t* ds_ptr = smem + kSmemDS + st * 16384;
        const int sw = kr & 7;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int off = ((j ^ sw) << 4) + 4 * (lane & 3);
          *reinterpret_cast<uint32_t*>(ds_ptr + kr * 128 + off) = ds_frag[2 * j];
          *reinterpret_cast<uint32_t*>(ds_ptr + (kr + 8) * 128 + off) = ds_frag[2 * j + 1];
        }
      }
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      asm volatile("bar.sync 1, 256;\n" ::: "memory");

      // dQ[:, 64wg:64wg+64] = dS · K[:, 64wg:64wg+64] over all 128 keys.
      fence_regs(dq);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        wgmma_m64n64k16_ss<1, 1>(dq, make_desc(ds_s + kk * 2048, 8192, 1024),
                                 make_desc(base + kSmemK + wg * kKvHalf + kk * 2048, kKvHalf, 1024),
                                 kk > 0);
      }
      wgmma_commit();
      wgmma_wait<1>();
      fence_regs(dv_acc);
      fence_regs(dk_acc);
      fence_regs(p_frag);
      fence_regs(ds_frag);
      mbar_arrive(bar_empty + 8 * st);
      wgmma_wait<0>();
      fence_regs(dq);

      float* dst = dq_acc + ((size_t)row0 + (size_t)i * kRows + warp * 16 + (lane >> 2)) * 128 +
                   wg * 64 + c2;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        red_add_v2(dst + 8 * j, dq[4 * j], dq[4 * j + 1]);
        red_add_v2(dst + 8 * 128 + 8 * j, dq[4 * j + 2], dq[4 * j + 3]);
      }
    }

    // dK (scaled) and dV out, bf16.
    const size_t grow = (size_t)row0 + (size_t)n_blk * kKeys + kr;
    uint16_t* k0 = dk + grow * 128 + c2;
    uint16_t* v0 = dv + grow * 128 + c2;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      *reinterpret_cast<uint32_t*>(k0 + 8 * j) =
          pack_bf16(dk_acc[4 * j] * scale, dk_acc[4 * j + 1] * scale);
      *reinterpret_cast<uint32_t*>(k0 + 8 * 128 + 8 * j) =
          pack_bf16(dk_acc[4 * j + 2] * scale, dk_acc[4 * j + 3] * scale);
      *reinterpret_cast<uint32_t*>(v0 + 8 * j) = pack_bf16(dv_acc[4 * j], dv_acc[4 * j + 1]);
      *reinterpret_cast<uint32_t*>(v0 + 8 * 128 + 8 * j) =
          pack_bf16(dv_acc[4 * j + 2], dv_acc[4 * j + 3]);
    }
  }
}
