#include "evaluator/baselines/cudnn_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace ptxbench::cudnn {
namespace {

template <typename F>
bool bind(void* lib, const char* symbol, F& fn, std::string& error) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!fn) error = std::string("symbol ") + symbol + " missing from cuDNN";
  return fn != nullptr;
}

api open_library() {
  api a;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("PTXBENCH_CUDNN_LIBRARY"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back("libcudnn.so.9");
  candidates.emplace_back("libcudnn.so");
  void* lib = nullptr;
  std::string tried;
  for (const auto& name : candidates) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      a.library = name;
      break;
    }
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + name + ": " + (why ? why : "not found");
  }
  if (!lib) {
    a.error = "cuDNN not found (" + tried + ")";
    return a;
  }
  std::string& e = a.error;
  const bool ok = bind(lib, "cudnnGetVersion", a.get_version, e) && bind(lib, "cudnnGetErrorString", a.get_error_string, e) &&
                  bind(lib, "cudnnGetLastErrorString", a.get_last_error_string, e) &&
                  bind(lib, "cudnnCreate", a.create, e) && bind(lib, "cudnnDestroy", a.destroy, e) &&
                  bind(lib, "cudnnSetStream", a.set_stream, e) &&
                  bind(lib, "cudnnBackendCreateDescriptor", a.backend_create, e) &&
                  bind(lib, "cudnnBackendDestroyDescriptor", a.backend_destroy, e) &&
                  bind(lib, "cudnnBackendFinalize", a.backend_finalize, e) &&
                  bind(lib, "cudnnBackendSetAttribute", a.backend_set, e) &&
                  bind(lib, "cudnnBackendGetAttribute", a.backend_get, e) &&
                  bind(lib, "cudnnBackendExecute", a.backend_execute, e);
  if (!ok) return a;
  a.version = a.get_version();
  if (a.version < 90000) {
    a.error = "cuDNN " + version_string(a.version) + " is older than 9.0, which the fused attention graphs need";
    return a;
  }
  a.loaded = true;
  return a;
}

}  // namespace

const api& load() {
  static std::once_flag once;
  static api table;
  std::call_once(once, [] { table = open_library(); });
  return table;
}

std::string version_string(size_t v) {
  // cuDNN 9 encodes major*10000 + minor*100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

void check(cudnnStatus_t s, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const api& a = load();
  std::string msg = what + ": ";
  msg += a.get_error_string ? a.get_error_string(s) : ("cuDNN status " + std::to_string(static_cast<int>(s)));
  if (a.get_last_error_string) {
    char last[1024] = {0};
    a.get_last_error_string(last, sizeof(last));
    if (last[0]) msg += std::string(" (") + last + ")";
  }
  throw error(msg);
}

}  // namespace ptxbench::cudnn
