// wgmma with both operands in shared memory for the sm_90a GEMM template:
// m64nNk16 (bf16, fp16) and m64nNk32 (e4m3), N = 128 or 256, B K-major or
// (bf16/fp16 only) N-major, and the matrix descriptor of an N-major tile.
#pragma once

#include <cstdint>

#include "../common/wgmma_gemm.cuh"

#define GEMM_BF16 0
#define GEMM_FP16 1
#define GEMM_E4M3 2

#define WGMMA_REGS64                                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "    \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
  "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

#define WGMMA_REGS128                                                                                         \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "    \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
  "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, " \
  "%85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, " \
  "%105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, "    \
  "%122, %123, %124, %125, %126, %127}"

#define WGMMA_ACC64 \
  WGMMA_ACC8(0), WGMMA_ACC8(8), WGMMA_ACC8(16), WGMMA_ACC8(24), WGMMA_ACC8(32), WGMMA_ACC8(40), WGMMA_ACC8(48), \
      WGMMA_ACC8(56)
#define WGMMA_ACC128                                                                                        \
  WGMMA_ACC64, WGMMA_ACC8(64), WGMMA_ACC8(72), WGMMA_ACC8(80), WGMMA_ACC8(88), WGMMA_ACC8(96), WGMMA_ACC8(104), \
      WGMMA_ACC8(112), WGMMA_ACC8(120)

// The first wgmma of a chain passes accumulate = 0 (scale-d): it overwrites
// d instead of needing zeroed registers (zeroing made ptxas serialise the
// wgmmas, C7515).
#define WGMMA_PRED(i) "{\n.reg .pred p;\nsetp.ne.b32 p, %" #i ", 0;\n"

namespace gemm {

// d (64×N fp32) = [d +] A(64×K) · B(N×K)ᵀ, K = 16 (bf16/fp16) or 32 (e4m3).
// kTransB: B is N-major in shared memory (imm-trans-b = 1).
template <int kIn, int kN, int kTransB>
__device__ __forceinline__ void wgmma_ss(float (&d)[kN / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  static_assert(kN == 128 || kN == 256, "tile N is 128 or 256");
  static_assert(kIn != GEMM_E4M3 || kTransB == 0, "fp8 wgmma needs K-major B");
  if constexpr (kN == 256 && kIn == GEMM_BF16) {
    asm volatile(WGMMA_PRED(130) "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WGMMA_REGS128
                                 ", %128, %129, p, 1, 1, 0, %131;\n}\n"
                 : WGMMA_ACC128
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransB));
  } else if constexpr (kN == 256 && kIn == GEMM_FP16) {
    asm volatile(WGMMA_PRED(130) "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " WGMMA_REGS128
                                 ", %128, %129, p, 1, 1, 0, %131;\n}\n"
                 : WGMMA_ACC128
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransB));
  } else if constexpr (kN == 256) {
    asm volatile(WGMMA_PRED(130) "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " WGMMA_REGS128
                                 ", %128, %129, p, 1, 1;\n}\n"
                 : WGMMA_ACC128
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate));
  } else if constexpr (kIn == GEMM_BF16) {
    asm volatile(WGMMA_PRED(66) "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WGMMA_REGS64
                                ", %64, %65, p, 1, 1, 0, %67;\n}\n"
                 : WGMMA_ACC64
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransB));
  } else if constexpr (kIn == GEMM_FP16) {
    asm volatile(WGMMA_PRED(66) "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " WGMMA_REGS64
                                ", %64, %65, p, 1, 1, 0, %67;\n}\n"
                 : WGMMA_ACC64
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransB));
  } else {
    asm volatile(WGMMA_PRED(66) "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " WGMMA_REGS64
                                ", %64, %65, p, 1, 1;\n}\n"
                 : WGMMA_ACC64
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate));
  }
}

// Descriptor of an N-major (MN-major) 128B-swizzled operand as TMA writes
// it from a [K, N] row-major tensor with box [64 (N), rows (K)]: each K row
// is 128 bytes (64 elements of N), 8-row groups 1024 bytes apart (stride
// byte offset), and the next 64 columns of N start `chunk_bytes` later
// (leading byte offset; PTX ISA "Matrix Descriptor Format", MN-major swizzled).
__device__ __forceinline__ uint64_t smem_desc_mn(uint32_t addr, uint32_t chunk_bytes) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t((chunk_bytes & 0x3FFFF) >> 4) << 16) |
         (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace gemm
