// Task files and experiment configs: user JSON read with JSON paths in every
// error. Byte 0 chooses the parser, the rest is the document.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/loop/experiment_config.hpp"
#include "evaluator/api/expression.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/task.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const nlohmann::json j = ptxbench::parse_json_bounded(text, "fuzz");
    if (data[0] & 1) {
      ptxbench::parse_experiment_config(j, "fuzz.json");
    } else {
      const ptxbench::task t = ptxbench::parse_task(j, "fuzz.json");
      // What the evaluator computes from a task: element counts, flops, scalars.
      for (const auto& s : t.sizes) {
        for (const auto& ts : t.tensors) ptxbench::tensor_elements(ts, s);
        ptxbench::task_flops(t, s);
        ptxbench::scalar_values(t, s);
      }
      ptxbench::parse_task(ptxbench::task_to_json(t), "round trip");
    }
  } catch (const ptxbench::input_error&) {
  } catch (const ptxbench::expression_error&) {
  }
  return 0;
}
