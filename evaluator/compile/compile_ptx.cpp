// compile_ptx: chooses the compiler (see compile.hpp: ptxas whole-program when
// available, nvJitLink otherwise) and times the compile.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "evaluator/compile/compile_backends.hpp"
#include "evaluator/compile/subprocess.hpp"

namespace ptxbench {

void add_compile_error(compile_report& report, std::string message) {
  ptxas_diagnostic d;
  d.severity = "error";
  d.message = std::move(message);
  report.diagnostics.push_back(std::move(d));
}

std::string ptxas_path() {
  if (const char* configured = std::getenv("PTXBENCH_PTXAS"); configured && *configured) {
    return find_executable("", {configured}).string();
  }
  return find_executable("ptxas", {std::filesystem::path(PTXBENCH_CUDA_BIN_DIR) / "ptxas", "/usr/local/cuda/bin/ptxas"})
      .string();
}

compiled_module compile_ptx(const std::string& ptx, const std::string& arch) {
  return compile_ptx(ptx, arch, compiler_backend::automatic);
}

compiled_module compile_ptx(const std::string& ptx, const std::string& arch, compiler_backend backend) {
  const auto start = std::chrono::steady_clock::now();
  compiled_module out;
  out.report.arch = arch;
  if (backend == compiler_backend::automatic) {
    const char* configured = std::getenv("PTXBENCH_COMPILER");
    const std::string choice = configured ? configured : "";
    backend = choice == "nvjitlink"                        ? compiler_backend::nvjitlink
              : choice == "ptxas" || !ptxas_path().empty() ? compiler_backend::ptxas
                                                           : compiler_backend::nvjitlink;
  }
  static const std::regex arch_pattern("sm_[0-9]+[a-z]?");
  if (!std::regex_match(arch, arch_pattern)) {
    add_compile_error(out.report, "'" + arch + "' is not a target architecture (sm_90a, sm_100a, ...)");
  } else if (ptx.find_first_not_of(" \t\r\n") == std::string::npos) {
    add_compile_error(out.report, "the PTX module is empty");
  } else if (backend == compiler_backend::ptxas) {
    const std::string ptxas = ptxas_path();
    out.report.log = "compiler: ptxas (whole program) -arch=" + arch + "\n";
    if (ptxas.empty()) {
      add_compile_error(out.report, "ptxas not found (set PTXBENCH_PTXAS or PTXBENCH_COMPILER=nvjitlink)");
    } else {
      compile_with_ptxas(ptx, arch, ptxas, out);
    }
  } else {
    out.report.log = "compiler: nvJitLink (relocatable) -arch=" + arch + "\n";
    compile_with_nvjitlink(ptx, arch, out);
  }
  out.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace ptxbench
