// compile_ptx: chooses the compiler (see compile.hpp: ptxas whole-program when
// available, nvJitLink otherwise) and times the compile.
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "evaluator/compile/compile_backends.hpp"
#include "evaluator/compile/ptx_text.hpp"
#include "evaluator/compile/subprocess.hpp"

namespace ptxbench {

void add_compile_error(compile_report& report, std::string message) {
  ptxas_diagnostic d;
  d.severity = "error";
  d.message = std::move(message);
  report.diagnostics.push_back(std::move(d));
}

void fail_compile(compiled_module& out, std::string message) {
  out.report.log += "evaluator error: " + message + "\n";
  out.evaluator_error = std::move(message);
}

bool has_error_diagnostic(const compile_report& report) {
  for (const ptxas_diagnostic& d : report.diagnostics)
    if (d.severity == "error") return true;
  return false;
}

std::string ptxas_path() {
  if (const char* configured = std::getenv("PTXBENCH_PTXAS"); configured && *configured) {
    return find_executable("", {configured}).string();
  }
  return find_executable("ptxas", {std::filesystem::path(PTXBENCH_CUDA_BIN_DIR) / "ptxas", "/usr/local/cuda/bin/ptxas"})
      .string();
}

int compile_time_limit_ms() {
  if (const char* configured = std::getenv("PTXBENCH_COMPILE_TIME_LIMIT_S"); configured && *configured) {
    char* end = nullptr;
    const double seconds = std::strtod(configured, &end);
    if (end != configured && *end == '\0' && seconds > 0 && seconds <= 86400) return static_cast<int>(seconds * 1000);
  }
  return k_compile_time_limit_s * 1000;
}

std::string ptx_bounds_problem(const std::string& ptx) {
  if (ptx.size() > k_max_ptx_bytes)
    return "PTX has " + std::to_string(ptx.size()) + " bytes; the limit is " + std::to_string(k_max_ptx_bytes);
  // Counted on the comment-free text, as whole words: linear, no token list.
  const std::string code = ptx_text::blank_comments_and_strings(ptx);
  size_t entries = 0;
  auto word = [&](size_t i) {
    const char c = code[i];
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '%';
  };
  for (size_t at = code.find(".entry"); at != std::string::npos; at = code.find(".entry", at + 6)) {
    if ((at == 0 || !word(at - 1)) && (at + 6 >= code.size() || !word(at + 6))) ++entries;
  }
  if (entries > k_max_ptx_entries)
    return "PTX has " + std::to_string(entries) + " entries; the limit is " + std::to_string(k_max_ptx_entries);
  return "";
}

compiler_backend automatic_backend() {
  const char* configured = std::getenv("PTXBENCH_COMPILER");
  const std::string choice = configured ? configured : "";
  return choice == "nvjitlink"                        ? compiler_backend::nvjitlink
         : choice == "ptxas" || !ptxas_path().empty() ? compiler_backend::ptxas
                                                      : compiler_backend::nvjitlink;
}

compiled_module compile_ptx(const std::string& ptx, const std::string& arch, compiler_backend backend) {
  const auto start = std::chrono::steady_clock::now();
  compiled_module out;
  out.report.arch = arch;
  if (backend == compiler_backend::automatic) backend = automatic_backend();
  static const std::regex arch_pattern("sm_[0-9]+[a-z]?");
  // Length first: std::regex recurses per character and a long name would overflow the stack.
  if (arch.size() > 16 || !std::regex_match(arch, arch_pattern)) {
    add_compile_error(out.report, "'" + arch + "' is not a target architecture (sm_90a, sm_100a, ...)");
  } else if (ptx.find_first_not_of(" \t\r\n") == std::string::npos) {
    add_compile_error(out.report, "the PTX module is empty");
  } else if (std::string bound = ptx_bounds_problem(ptx); !bound.empty()) {
    add_compile_error(out.report, bound);
  } else if (backend == compiler_backend::ptxas) {
    const std::string ptxas = ptxas_path();
    out.report.log = "compiler: ptxas (whole program) -arch=" + arch + "\n";
    if (ptxas.empty()) {
      fail_compile(out, "ptxas not found (set PTXBENCH_PTXAS or PTXBENCH_COMPILER=nvjitlink)");
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
