#include "evaluator/gpu/module_globals.hpp"

#include "evaluator/gpu/cuda_check.hpp"

namespace ptxbench::gpu {

std::string find_global_sections(const std::vector<char>& cubin, CUmodule module, std::vector<global_section>& out) {
  out.clear();
  cubin_globals g = read_cubin_globals(cubin);
  if (!g.error.empty()) return g.error;
  for (const auto& sec : g.sections) {
    if (sec.bytes == 0) continue;
    global_section found;
    found.name = sec.name;
    found.bytes = sec.bytes;
    found.initial = sec.initial;
    for (const auto& sym : g.symbols) {
      if (sym.section != sec.name || sym.name.empty()) continue;
      CUdeviceptr p = 0;
      size_t bytes = 0;
      if (cuModuleGetGlobal(&p, &bytes, module, sym.name.c_str()) != CUDA_SUCCESS || p < sym.offset) continue;
      found.address = p - sym.offset;
      break;
    }
    if (found.address == 0)
      return "the module's " + sec.name + " section (" + std::to_string(sec.bytes) +
             " bytes of .global variables) could not be located, so its state could not be reset between runs";
    out.push_back(std::move(found));
  }
  return "";
}

void restore_global_sections(const std::vector<global_section>& sections, CUstream stream) {
  for (const auto& s : sections) {
    if (s.initial.empty()) PTXB_CU(cuMemsetD8Async(s.address, 0, s.bytes, stream));
    else PTXB_CU(cuMemcpyHtoDAsync(s.address, s.initial.data(), s.initial.size(), stream));
  }
}

}  // namespace ptxbench::gpu
