// PTX -> cubin through nvJitLink, in process and without a GPU.
// nvJitLink runs ptxas on the PTX when it is added; a PTX error therefore
// shows up as the result of nvJitLinkAddData, and nvJitLinkComplete may still
// report success afterwards, so both results decide `ok`.
#include <nvJitLink.h>

#include <string>
#include <vector>

#include "evaluator/compile/compile_backends.hpp"
#include "evaluator/compile/ptxas_log.hpp"

namespace ptxbench {
namespace {

// Owns one nvJitLink handle; handles are independent, which makes compiles
// on several threads safe.
class jit_link {
 public:
  explicit jit_link(std::vector<const char*> options) {
    m_created = nvJitLinkCreate(&m_handle, static_cast<uint32_t>(options.size()), options.data());
  }
  ~jit_link() {
    if (m_created == NVJITLINK_SUCCESS) nvJitLinkDestroy(&m_handle);
  }
  jit_link(const jit_link&) = delete;
  jit_link& operator=(const jit_link&) = delete;

  nvJitLinkResult created() const { return m_created; }
  nvJitLinkHandle handle() const { return m_handle; }

  std::string error_log() const {
    size_t size = 0;
    if (nvJitLinkGetErrorLogSize(m_handle, &size) != NVJITLINK_SUCCESS || size == 0) return "";
    std::string log(size, '\0');
    if (nvJitLinkGetErrorLog(m_handle, log.data()) != NVJITLINK_SUCCESS) return "";
    return log.c_str();
  }
  std::string info_log() const {
    size_t size = 0;
    if (nvJitLinkGetInfoLogSize(m_handle, &size) != NVJITLINK_SUCCESS || size == 0) return "";
    std::string log(size, '\0');
    if (nvJitLinkGetInfoLog(m_handle, log.data()) != NVJITLINK_SUCCESS) return "";
    return log.c_str();
  }

 private:
  nvJitLinkHandle m_handle = nullptr;
  nvJitLinkResult m_created = NVJITLINK_ERROR_INTERNAL;
};

const char* result_name(nvJitLinkResult r) {
  switch (r) {
    case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
    case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH";
    case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
    case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
    case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
    case NVJITLINK_ERROR_UNRECOGNIZED_ARCH: return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
    case NVJITLINK_ERROR_UNSUPPORTED_ARCH: return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
    default: return "NVJITLINK_ERROR";
  }
}

}  // namespace

void compile_with_nvjitlink(const std::string& ptx, const std::string& arch, compiled_module& out, bool line_info) {
  const std::string arch_option = "-arch=" + arch;
  std::vector<const char*> options{arch_option.c_str(), "-Xptxas=-v"};
  if (line_info) options.push_back("-lineinfo");
  jit_link link(options);
  // An architecture the compiler does not know fails the compile as ptxas
  // would; any other handle not made (internal, out of memory) is the evaluator's failure.
  const nvJitLinkResult created = link.created();
  if (created == NVJITLINK_ERROR_UNRECOGNIZED_ARCH || created == NVJITLINK_ERROR_UNSUPPORTED_ARCH) {
    add_compile_error(out.report, std::string("nvJitLink rejected the target ") + arch + " (" + result_name(created) + ")");
    return;
  }
  if (created != NVJITLINK_SUCCESS) {
    fail_compile(out, std::string("nvJitLink could not be set up for ") + arch + " (" + result_name(created) + ")");
    return;
  }
  const nvJitLinkResult added =
      nvJitLinkAddData(link.handle(), NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "candidate.ptx");
  const nvJitLinkResult completed = added == NVJITLINK_SUCCESS ? nvJitLinkComplete(link.handle()) : added;

  // ptxas calls nvJitLink's input "application ptx input"; name it as the ptxas backend does.
  std::string error_log = link.error_log();
  for (size_t at = error_log.find("application ptx input,"); at != std::string::npos;
       at = error_log.find("application ptx input,", at)) {
    error_log.replace(at, 22, "candidate.ptx,");
  }
  const std::string info_log = link.info_log();
  out.report.log += error_log + (error_log.empty() || info_log.empty() ? "" : "\n") + info_log;
  out.report.diagnostics = parse_ptxas_diagnostics(out.report.log, ptx);
  out.report.kernels = parse_ptxas_resources(info_log);

  // The PTX failed when ptxas or the linker said why (the linker's "error   :
  // Undefined reference to 'foo'" comes with NVJITLINK_ERROR_INTERNAL); a
  // failure with no error diagnostic (out of memory, a thread pool) is the evaluator's.
  if (completed != NVJITLINK_SUCCESS) {
    if (!has_error_diagnostic(out.report))
      fail_compile(out, std::string("nvJitLink failed without an error message: ") + result_name(completed));
    return;
  }
  size_t cubin_size = 0;
  if (nvJitLinkGetLinkedCubinSize(link.handle(), &cubin_size) != NVJITLINK_SUCCESS || cubin_size == 0) {
    fail_compile(out, "nvJitLink produced no cubin");
    return;
  }
  out.cubin.resize(cubin_size);
  if (nvJitLinkGetLinkedCubin(link.handle(), out.cubin.data()) != NVJITLINK_SUCCESS) {
    out.cubin.clear();
    fail_compile(out, "nvJitLink could not return the cubin");
    return;
  }
  out.report.cubin_bytes = cubin_size;
  out.ok = true;
}

std::string nvjitlink_version() {
  unsigned major = 0, minor = 0;
  if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace ptxbench
