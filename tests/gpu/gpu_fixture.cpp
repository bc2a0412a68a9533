#include "gpu_fixture.hpp"

#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "evaluator/api/local.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench::gpu_test {

std::filesystem::path source_dir() {
  if (const char* e = std::getenv("PTXBENCH_SOURCE_DIR"); e && *e) return e;
  return PTXBENCH_SOURCE_DIR;
}

evaluator& shared_evaluator() {
  static std::unique_ptr<evaluator> ev = make_local_evaluator(local_evaluator_options{});
  return *ev;
}

evaluator& hw_evaluator() {
  static std::unique_ptr<evaluator> ev = [] {
    local_evaluator_options o;
    o.hw_check = 1;
    return make_local_evaluator(o);
  }();
  return *ev;
}

std::string no_gpu_at_all() {
  // Asked of the NVIDIA driver itself, not of our worker: the worker not
  // starting is the failure the GPU tests exist to catch.
  const bool device_node =
      std::filesystem::exists("/dev/nvidiactl") || std::filesystem::exists("/dev/nvidia0");
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    const char* why = ::dlerror();
    return device_node ? "" : std::string("no NVIDIA driver (") + (why ? why : "libcuda.so.1 not found") + ")";
  }
  using init_fn = int (*)(unsigned);
  using count_fn = int (*)(int*);
  auto init = reinterpret_cast<init_fn>(::dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<count_fn>(::dlsym(driver, "cuDeviceGetCount"));
  if (!init || !count) return "";  // a driver library without its API: there, but broken
  const int rc = init(0);
  constexpr int k_no_device = 100, k_stub_library = 34;  // CUDA_ERROR_NO_DEVICE, CUDA_ERROR_STUB_LIBRARY
  if (rc == k_no_device) return "the NVIDIA driver finds no device (CUDA_ERROR_NO_DEVICE)";
  if (rc == k_stub_library) return "libcuda.so.1 is the toolkit's stub, not a driver (CUDA_ERROR_STUB_LIBRARY)";
  if (rc != 0) return "";  // any other failure of a present driver: a GPU machine that is unusable
  int devices = 0;
  if (count(&devices) == 0 && devices == 0) return "the NVIDIA driver finds no device";
  return "";
}

void require_gpu() {
  if (shared_evaluator().gpu_description() != "none") return;
  // Ask for the evaluator's reason the way a user would see it: through a result.
  static const std::string reason = [] {
    evaluation_request probe;
    probe.t = load_task(source_dir() / "tasks", "gemm_bf16_mma_sync");
    probe.ptx = read_text_file(source_dir() / "tests/fixtures/adversarial/correct_mma_sync/kernel.ptx");
    probe.manifest_text = read_text_file(source_dir() / "tests/fixtures/adversarial/correct_mma_sync/manifest.json");
    return shared_evaluator().evaluate(probe).stages[stage::runtime].reason;
  }();
  static const std::string absent = no_gpu_at_all();
  if (absent.empty())
    FAIL("a GPU is present (the NVIDIA driver finds a device) but the evaluator cannot use it: " << reason);
  std::printf("SKIP (exit 77): GPU tests need a GPU, and this machine has none: %s (evaluator: %s)\n",
              absent.c_str(), reason.c_str());
  std::fflush(stdout);
  std::_Exit(77);
}

void log_result(const std::string& name, const evaluation_result& r) {
  static std::mutex m;
  std::lock_guard g(m);
  std::printf("  %-28s %-12s %7.0f ms  %.200s\n", name.c_str(), verdict_name(r).c_str(), r.total_ms,
              r.headline.c_str());
  std::fflush(stdout);
  const char* path = std::getenv("PTXBENCH_GPU_TEST_LOG");
  if (!path || !*path) return;
  std::ofstream out(path, std::ios::app);
  nlohmann::json j = to_json(r);
  j["case"] = name;
  out << j.dump() << "\n";
}

}  // namespace ptxbench::gpu_test
