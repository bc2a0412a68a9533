#pragma once
// The global-memory sections of a cubin (.nv.global: zero-filled, and
// .nv.global.init: with initial values) and the symbols defined in them, read
// from its ELF64 image. CUDA-free, so it is tested without a GPU. The input is
// the evaluator's own ptxas output, but it is read defensively: a malformed
// image gives an error, never a read outside the buffer.
#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::gpu {

struct cubin_global_symbol {
  std::string name;
  std::string section;
  uint64_t offset = 0;  // within its section
  uint64_t bytes = 0;
};

struct cubin_globals {
  std::string error;  // non-empty: not a readable ELF64 cubin
  std::vector<cubin_global_symbol> symbols;
  struct section_info {
    std::string name;
    uint64_t bytes = 0;
    std::vector<char> initial;  // empty for .nv.global
  };
  std::vector<section_info> sections;
};

cubin_globals read_cubin_globals(const std::vector<char>& cubin);

}  // namespace ptxbench::gpu
