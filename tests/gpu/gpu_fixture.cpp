#include "gpu_fixture.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "evaluator/api/local.hpp"

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

void require_gpu() {
  if (shared_evaluator().gpu_description() != "none") return;
  // Ask for the reason the way a user would see it: through a result.
  evaluation_request probe;
  probe.t = load_task(source_dir() / "tasks", "gemm_bf16_mma_sync");
  probe.ptx = read_text_file(source_dir() / "tests/fixtures/adversarial/correct_mma_sync/kernel.ptx");
  probe.manifest_text = read_text_file(source_dir() / "tests/fixtures/adversarial/correct_mma_sync/manifest.json");
  auto r = shared_evaluator().evaluate(probe);
  std::printf("SKIP (exit 77): GPU tests need a GPU: %s\n", r.stages[stage::runtime].reason.c_str());
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
