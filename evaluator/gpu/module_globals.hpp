#pragma once
// The candidate module's own global memory (`.global` variables in its PTX,
// the cubin's .nv.global and .nv.global.init sections). A kernel can keep
// state there from one launch to the next (a launch counter, a copy of an
// earlier result) and behave differently in later runs. Before every checked
// run, timed sample and counted run the worker puts these sections back to
// the contents they had when the module was loaded (zeros, or the initial
// values in the cubin), so every run starts from the same state, as if the
// module had just been loaded.
#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "evaluator/gpu/cubin_globals.hpp"

namespace ptxbench::gpu {

// One `.global` variable of a loaded module: where it lives on the device and
// what it holds at load time.
struct global_section {
  std::string name;        // the variable's symbol
  CUdeviceptr address = 0;
  uint64_t bytes = 0;
  std::vector<char> initial;  // empty for .nv.global (zero-filled)
};

// Reads the cubin's symbol table (an ELF64 image; malformed input gives an
// error, never a read outside `cubin`) and locates each global section of
// `module` variable by variable (cuModuleGetGlobal). Returns "" or why a
// variable could not be located (the caller reports it as a note; the
// variables found are still restored).
std::string find_global_sections(const std::vector<char>& cubin, CUmodule module, std::vector<global_section>& out);

// Puts every variable back to its load-time contents (asynchronous on `stream`).
void restore_global_sections(const std::vector<global_section>& sections, CUstream stream);

}  // namespace ptxbench::gpu
