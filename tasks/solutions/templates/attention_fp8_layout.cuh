// The layout that lets the fp8 forward use P's accumulator registers as the A
// fragments of wgmma k32 without moving a byte between threads.
//
// After Q·Kᵀ a thread holds, per row and 32-key step, the keys 2t, 2t+1,
// 8+2t, 9+2t (and 16 + those), t = lane % 4. The e4m3 A fragment of k32 wants
// the thread's four bytes of a register to be the step's k = 4t .. 4t+3 (and
// 16 + those). Packing the held keys in that order makes P's k index a fixed
// permutation of the keys inside every 16: k = 4t + i holds key perm16(4t + i).
// P·V sums over k, so V's rows (the K-major Vᵀ image's bytes) take the same
// permutation and the product is unchanged.
#pragma once

#include <cstddef>

#ifdef __CUDACC__
#define ATTN_HD __host__ __device__ __forceinline__
#else
#define ATTN_HD inline
#endif

namespace attn {

// Which of a thread's 64 score accumulators (wgmma m64n128 layout: s[4j], s[4j+1]
// row r0, keys 8j + 2t, +1; s[4j+2], s[4j+3] row r0 + 8) goes to byte `byte` of
// A register `reg` (0..3) of 32-key step kk.
ATTN_HD int fp8_frag_source(int kk, int reg, int byte) {
  return 16 * kk + 8 * (reg >> 1) + 2 * (reg & 1) + 4 * (byte >> 1) + (byte & 1);
}

// The key (within its 16) that P's k index x (0..15) holds.
ATTN_HD int perm16(int x) { return 2 * (x >> 2) + (x & 1) + 8 * ((x >> 1) & 1); }

// The key (0..127 within the tile) at byte e of 16-byte chunk `chunk` of a row
// of the Vᵀ image: chunk c holds k indices 16c .. 16c+15.
ATTN_HD int vt_key(int chunk, int e) { return 16 * chunk + perm16(e); }

// Byte offset of chunk `chunk` of head-dim row d in the 16 KB image: rows of
// 128 bytes, 16-byte chunks XOR-swizzled by d % 8 (TMA's 128-byte swizzle, the
// layout the wgmma descriptors of the K-major operand expect).
ATTN_HD size_t vt_offset(int d, int chunk) { return (size_t)d * 128 + (size_t)((chunk ^ (d & 7)) << 4); }

}  // namespace attn
