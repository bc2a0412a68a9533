#include "evaluator/gpu/module_globals.hpp"

#include <algorithm>

#include "evaluator/gpu/cuda_check.hpp"

namespace ptxbench::gpu {

// Each variable is located and restored on its own: the driver need not place
// a section's variables contiguously (a 32 MiB array next to a small counter
// was measured to break the "section base = symbol address - offset" guess),
// so only [address, address + size) of each symbol is ever written.
std::string find_global_sections(const std::vector<char>& cubin, CUmodule module, std::vector<global_section>& out) {
  out.clear();
  cubin_globals g = read_cubin_globals(cubin);
  if (!g.error.empty()) return g.error;
  std::string problem;
  for (const auto& sec : g.sections) {
    if (sec.bytes == 0) continue;
    for (const auto& sym : g.symbols) {
      if (sym.section != sec.name || sym.name.empty() || sym.bytes == 0) continue;
      CUdeviceptr p = 0;
      size_t bytes = 0;
      if (cuModuleGetGlobal(&p, &bytes, module, sym.name.c_str()) != CUDA_SUCCESS || p == 0) {
        if (problem.empty())
          problem = "the module's .global variable " + sym.name + " (" + std::to_string(sym.bytes) +
                    " bytes) could not be located, so its state could not be reset between runs";
        continue;
      }
      global_section v;
      v.name = sym.name;
      v.address = p;
      v.bytes = std::min<uint64_t>(bytes, sym.bytes);
      if (!sec.initial.empty()) {
        // Initial values come from the section image; a symbol past its end keeps zeros.
        v.initial.assign(v.bytes, 0);
        if (sym.offset < sec.initial.size()) {
          uint64_t n = std::min<uint64_t>(v.bytes, sec.initial.size() - sym.offset);
          std::copy_n(sec.initial.begin() + std::ptrdiff_t(sym.offset), n, v.initial.begin());
        }
      }
      out.push_back(std::move(v));
    }
  }
  return problem;
}

void restore_global_sections(const std::vector<global_section>& sections, CUstream stream) {
  for (const auto& s : sections) {
    if (s.initial.empty()) PTXB_CU(cuMemsetD8Async(s.address, 0, s.bytes, stream));
    else PTXB_CU(cuMemcpyHtoDAsync(s.address, s.initial.data(), s.initial.size(), stream));
  }
}

}  // namespace ptxbench::gpu
