// Inline-PTX helpers of the attention solutions: base-2 exponential and fp32 pair
// to bf16x2 (the wgmma wrappers are in wgmma_ptx.cuh).
#pragma once

#include <cstdint>

#include "hopper_ptx.cuh"

DEVI float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
// Two floats to a bf16x2 register, lo in the low half (lower column index).
DEVI uint32_t pack_bf16(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %2, %1;\n" : "=r"(r) : "f"(lo), "f"(hi));
  return r;
}
