// Attention forward, bf16, FlashAttention-2 style with the Ampere-path
// instructions (mma.sync m16n8k16, ldmatrix, cp.async), for sm_90a (design in
// README.md beside this file).
//
// One CTA of 8 warps owns 128 query rows of one (batch, head), 16 per warp.
// K and V tiles of 64 keys stream through a two-stage cp.async ring in shared
// memory (rows of D bf16, 16-byte chunks XOR-swizzled by row % 8 so that
// ldmatrix reads are conflict-free). Per tile a warp computes S = Q·Kᵀ (Q's A
// fragments loaded once by ldmatrix, K's B fragments by ldmatrix), the online
// softmax in registers, and O += P·V with P's accumulators repacked as A
// fragments and V's B fragments by ldmatrix.trans.
//
// Macros: ATTN_HEAD_DIM 64 | 128. Grid [S/128, B*H], 256 threads, kSharedBytes of
// dynamic shared memory; S is a multiple of 128 (the task's constraint).
#include <cstdint>

#ifndef ATTN_HEAD_DIM
#define ATTN_HEAD_DIM 64
#endif

#include "../common/hopper_ptx.cuh"
#include "attention_softmax.cuh"

namespace {
constexpr int kD = ATTN_HEAD_DIM;
constexpr int kRows = 128;                 // query rows per CTA
constexpr int kKeys = 64;                  // keys per K/V tile
constexpr int kChunks = kD / 8;            // 16-byte chunks per row
constexpr int kRowBytes = kD * 2;
constexpr int kSmemQ = 0;
constexpr int kSmemK = kRows * kRowBytes;  // two stages
constexpr int kSmemV = kSmemK + 2 * kKeys * kRowBytes;
constexpr int kSharedBytes = kSmemV + 2 * kKeys * kRowBytes;  // the manifest's shared_bytes
constexpr int kThreads = 256;
constexpr int kCtasPerSm = kD == 64 ? 2 : 1;  // 128 registers a thread at head dim 64
static_assert(kD == 64 || kD == 128, "head dim 64 or 128");
static_assert(kCtasPerSm * (kSharedBytes + 1024) <= 233472, "CTAs per SM by shared memory");
}  // namespace

// Byte offset of chunk c of row r in a swizzled tile.
DEVI uint32_t swz(int r, int c) { return r * kRowBytes + ((c ^ (r & 7)) << 4); }

DEVI void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
DEVI void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
DEVI void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Copies `rows` rows of D bf16 starting at src into a swizzled tile.
template <int kTileRows>
DEVI void load_rows(uint32_t dst, const uint16_t* src) {
#pragma unroll
  for (int i = 0; i < kTileRows * kChunks / kThreads; ++i) {
    const int idx = threadIdx.x + kThreads * i, r = idx / kChunks, c = idx % kChunks;
    cp_async16(dst + swz(r, c), src + (size_t)r * kD + c * 8);
  }
}

DEVI void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
DEVI void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d (16×8 fp32) += a (16×16 bf16) · b (16×8 bf16).
DEVI void mma16816(float* d, const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// s (16 rows × 64 keys, the C layout of eight n8 tiles) = Q_warp · K_tileᵀ.
DEVI void qk(float (&s)[32], const uint32_t (&q)[kD / 16][4], uint32_t k_tile, int lane) {
#pragma unroll
  for (int i = 0; i < 32; ++i) s[i] = 0.f;
  const int m = lane >> 3;  // which 8×8 matrix this lane addresses
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk)
#pragma unroll
    for (int nt = 0; nt < kKeys / 16; ++nt) {
      // Keys 16nt .. 16nt+15 × head-dim columns 16kk .. 16kk+15: b0, b1 of two n8 tiles.
      uint32_t b[4];
      ldmatrix_x4(b, k_tile + swz(16 * nt + (m >> 1) * 8 + (lane & 7), 2 * kk + (m & 1)));
      mma16816(&s[8 * nt], q[kk], b[0], b[1]);
      mma16816(&s[8 * nt + 4], q[kk], b[2], b[3]);
    }
}

// o (16 rows × D) += P · V_tile, P from the score accumulators.
DEVI void pv(float (&o)[kD / 2], const float (&s)[32], uint32_t v_tile, int lane) {
  const int m = lane >> 3;
#pragma unroll
  for (int kk = 0; kk < kKeys / 16; ++kk) {
    const uint32_t a[4] = {pack_bf16(s[8 * kk], s[8 * kk + 1]), pack_bf16(s[8 * kk + 2], s[8 * kk + 3]),
                           pack_bf16(s[8 * kk + 4], s[8 * kk + 5]), pack_bf16(s[8 * kk + 6], s[8 * kk + 7])};
#pragma unroll
    for (int dt = 0; dt < kD / 16; ++dt) {
      // Keys 16kk .. 16kk+15 × head-dim columns 16dt .. 16dt+15, transposed.
      uint32_t b[4];
      ldmatrix_x4_trans(b, v_tile + swz(16 * kk + (m & 1) * 8 + (lane & 7), 2 * dt + (m >> 1)));
      mma16816(&o[8 * dt], a, b[0], b[1]);
      mma16816(&o[8 * dt + 4], a, b[2], b[3]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(kThreads, kCtasPerSm)
    attn_fwd_mma(const uint16_t* __restrict__ q, const uint16_t* __restrict__ k,
                 const uint16_t* __restrict__ v, uint16_t* __restrict__ out,
                 float* __restrict__ lse, int seq_len, float scale) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t base = smem_u32(smem);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const size_t row0 = (size_t)blockIdx.y * seq_len;  // first row of this (b, h)
  const size_t q_row = row0 + (size_t)blockIdx.x * kRows;
  const int n_kv = seq_len / kKeys;

  load_rows<kRows>(base + kSmemQ, q + q_row * kD);
  load_rows<kKeys>(base + kSmemK, k + row0 * kD);
  load_rows<kKeys>(base + kSmemV, v + row0 * kD);
  cp_async_commit();

  const float scale_log2 = scale * attn::kLog2e;
  uint32_t qf[kD / 16][4];
  float o[kD / 2], s[32];
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) o[i] = 0.f;
  float m[2] = {attn::kNegInf, attn::kNegInf}, l[2] = {0.f, 0.f}, alpha[2];

  for (int kb = 0; kb < n_kv; ++kb) {
    const int st = kb & 1;
    if (kb + 1 < n_kv) {  // the other stage was freed by the barrier ending step kb-1
      const size_t next = (row0 + (size_t)(kb + 1) * kKeys) * kD;
      load_rows<kKeys>(base + kSmemK + (st ^ 1) * kKeys * kRowBytes, k + next);
      load_rows<kKeys>(base + kSmemV + (st ^ 1) * kKeys * kRowBytes, v + next);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (kb == 0) {
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk)
        ldmatrix_x4(qf[kk], base + kSmemQ + swz(16 * warp + (lane & 15), 2 * kk + (lane >> 4)));
    }
    qk(s, qf, base + kSmemK + st * kKeys * kRowBytes, lane);
    attn::softmax_step(s, m, l, alpha, scale_log2);
    attn::rescale_o(o, alpha);
    pv(o, s, base + kSmemV + st * kKeys * kRowBytes, lane);
    __syncthreads();
  }

  // Epilogue: normalise, write O and LSE (natural log).
  attn::reduce_row_sums(l);
  const float inv0 = 1.f / l[0], inv1 = 1.f / l[1];
  const int r = 16 * warp + (lane >> 2), c2 = 2 * (lane & 3);
  uint16_t* o0 = out + (q_row + r) * kD + c2;
  uint16_t* o1 = o0 + 8 * kD;
#pragma unroll
  for (int j = 0; j < kD / 8; ++j) {
    *reinterpret_cast<uint32_t*>(o0 + 8 * j) = pack_bf16(o[4 * j] * inv0, o[4 * j + 1] * inv0);
    *reinterpret_cast<uint32_t*>(o1 + 8 * j) = pack_bf16(o[4 * j + 2] * inv1, o[4 * j + 3] * inv1);
  }
  if ((lane & 3) == 0) {
    lse[q_row + r] = (m[0] + __log2f(l[0])) * attn::kLn2;
    lse[q_row + r + 8] = (m[1] + __log2f(l[1])) * attn::kLn2;
  }
}
