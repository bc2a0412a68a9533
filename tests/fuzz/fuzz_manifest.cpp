// A model's launch manifest: parsed, then checked against a real task at every
// size (which evaluates each grid, block and byte expression). Errors are
// input_error or problems in the returned list, never anything else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "evaluator/common/json_path.hpp"
#include "evaluator/api/manifest.hpp"
#include "evaluator/api/task.hpp"

namespace {
const ptxbench::task& gemm() {
  static const ptxbench::task t =
      ptxbench::load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "gemm_bf16_wgmma_tma");
  return t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ptxbench::manifest m = ptxbench::parse_manifest_text(text);
    ptxbench::check_manifest_against_task(m, gemm());
    ptxbench::parse_manifest(ptxbench::manifest_to_json(m));  // the stored form reads back
  } catch (const ptxbench::input_error&) {
  }
  return 0;
}
