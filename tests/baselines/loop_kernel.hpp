#pragma once
// A kernel whose executed-instruction counts are known exactly: every thread
// runs a do-while loop `n` times (unrolling disabled) and stores one value.
// Per warp the loop body executes n times and the rest once, except a block
// of stores behind a branch that is never taken (n == 0xFFFFFFFF): never.
#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::gpu_test {

extern const char* const loop_kernel_ptx;
constexpr const char* loop_kernel_name = "loop_kernel";

// The PTX compiled for the current context's device by the driver's linker:
// the exact cubin bytes that are then loaded (and can be disassembled).
std::vector<char> link_loop_kernel();
// Any PTX linked the same way (`name` is the input's name in the linker's messages).
std::vector<char> link_ptx(const std::string& ptx, const char* name);

struct loaded_loop_kernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
};
loaded_loop_kernel load_loop_kernel(const std::vector<char>& cubin);

// Launches blocks × threads threads (threads a multiple of 32), each looping n times.
void launch_loop_kernel(const loaded_loop_kernel& k, CUstream stream, CUdeviceptr out, uint32_t n, unsigned blocks,
                        unsigned threads);

}  // namespace ptxbench::gpu_test

#include <string>

#include "evaluator/profile/sass_counter.hpp"

namespace ptxbench::gpu_test {

// How the counts of loop_kernel fall: every PC must have executed 0 times
// (never reached), `once` times (outside the loop: warps × launches) or
// `body` times (inside: warps × total iterations), and nothing else.
struct loop_count_classes {
  size_t pcs = 0, body_pcs = 0, once_pcs = 0, zero_pcs = 0, other_pcs = 0;
  bool offsets_aligned = true;  // every PC a multiple of 16 bytes (Hopper's instruction size)
  bool names_match = true;      // every record names loop_kernel
  std::string other;            // the first unexpected "pc:count"
  bool exact() const { return pcs > 0 && other_pcs == 0 && body_pcs >= 3 && once_pcs >= 3 && offsets_aligned && names_match; }
  std::string summary() const;
};
loop_count_classes classify_loop_counts(const sass_count_result& r, uint64_t once, uint64_t body);

}  // namespace ptxbench::gpu_test
