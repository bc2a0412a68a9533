// Pieces shared by the wgmma GEMM solutions: the shared-memory matrix descriptor
// of a 128B-swizzled K-major tile and WGMMA_ACC8, eight "+f" accumulator operands
// of an inline-asm wgmma (the accumulator array must be named d).
#pragma once

#include <cstdint>

namespace {

// Shared-memory matrix descriptor of a K-major tile written by TMA with 128B
// swizzle: rows of 128 bytes, 8-row groups 1024 bytes apart (stride byte
// offset), leading byte offset unused for this layout, base offset 0 because
// every tile starts on a 1024-byte boundary.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

}  // namespace

#define WGMMA_ACC8(i)                                                                                     \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
