// tcgen05 (sm_100a) pieces of the Blackwell GEMM template: instruction and
// shared-memory descriptors, the MMA, commit, tensor-memory alloc and loads,
// and the cluster-pair TMA load of the 2-CTA form. Every tcgen05 instruction
// of a kernel carries the same .cta_group (PTX ISA), so each helper takes it
// as a template argument.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace tc {

// Instruction descriptor (PTX ISA "Instruction descriptor", kind::f16 and
// kind::f8f6f4): D fp32 (bits 4-5 = 1); A and B types at bits 7-9 and 10-12
// (kind::f16: f16 0, bf16 1; kind::f8f6f4: e4m3 0); B N-major (transposed)
// at bit 16; N>>3 at bits 17-22; M>>4 at bits 24-28.
constexpr uint32_t instr_desc(uint32_t ab_type, bool b_mn_major, int m, int n) {
  return (1u << 4) | (ab_type << 7) | (ab_type << 10) | (uint32_t(b_mn_major) << 16) | (uint32_t(n >> 3) << 17) |
         (uint32_t(m >> 4) << 24);
}

// Shared-memory descriptor (tcgen05 layout) of a 128B-swizzled tile: start
// address, leading byte offset (K-major: unused, 16; N-major: the distance
// between 64-element column chunks), stride byte offset 1024 (8 rows of 128
// bytes), the fixed 0b001 at bits 46-48, swizzle mode 2 (128B) at 61-63.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo = 16) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) |
         (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 46) | (uint64_t(2) << 61);
}

template <int kCtaGroup>
__device__ __forceinline__ void alloc(uint32_t slot_addr, uint32_t columns) {
  if constexpr (kCtaGroup == 2) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot_addr), "r"(columns));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n");
  } else {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot_addr), "r"(columns));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n");
  }
}

template <int kCtaGroup>
__device__ __forceinline__ void dealloc(uint32_t tmem, uint32_t columns) {
  if constexpr (kCtaGroup == 2)
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" ::"r"(tmem), "r"(columns));
  else
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem), "r"(columns));
}

// D[tmem] = [D +] A·B (descriptors), issued by one thread (of the pair's
// leader CTA with cta_group::2). kFp8 selects kind::f8f6f4.
template <int kCtaGroup, bool kFp8>
__device__ __forceinline__ void mma(uint32_t tmem, uint64_t desc_a, uint64_t desc_b, uint32_t idesc, uint32_t acc) {
  if constexpr (kCtaGroup == 2 && kFp8)
    asm volatile("{\n.reg .pred p;\nsetp.ne.u32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::2.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n" ::"r"(tmem),
                 "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(acc));
  else if constexpr (kCtaGroup == 2)
    asm volatile("{\n.reg .pred p;\nsetp.ne.u32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}\n" ::"r"(tmem),
                 "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(acc));
  else if constexpr (kFp8)
    asm volatile("{\n.reg .pred p;\nsetp.ne.u32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n" ::"r"(tmem),
                 "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(acc));
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.u32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n" ::"r"(tmem),
                 "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(acc));
}

// Arrives on `bar` once the MMAs issued so far have completed; with
// cta_group::2 on the barrier at the same offset in both CTAs of the pair.
template <int kCtaGroup>
__device__ __forceinline__ void commit(uint32_t bar) {
  if constexpr (kCtaGroup == 2)
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n" ::"r"(
            bar),
        "h"(uint16_t(3))
        : "memory");
  else
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
                 : "memory");
}

// 32 consecutive fp32 columns of this warp's 32 lanes (one row a thread).
__device__ __forceinline__ void load_32x32(uint32_t (&v)[32], uint32_t taddr) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
        "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]), "=r"(v[16]),
        "=r"(v[17]), "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]), "=r"(v[24]),
        "=r"(v[25]), "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
      : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void fence_before_sync() { asm volatile("tcgen05.fence::before_thread_sync;\n"); }
__device__ __forceinline__ void fence_after_sync() { asm volatile("tcgen05.fence::after_thread_sync;\n"); }

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// The shared::cluster address of `local` (a shared::cta address) in CTA `rank`.
__device__ __forceinline__ uint32_t map_to_rank(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

// 2-D TMA load into this CTA's shared memory whose completion is signalled
// on `bar`, a shared::cluster address that may lie in the pair's other CTA.
__device__ __forceinline__ void tma_load_pair(uint32_t dst, const CUtensorMap* map, int c0, int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];\n" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

}  // namespace tc
