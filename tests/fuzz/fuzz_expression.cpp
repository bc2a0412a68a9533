// Integer and real expressions of manifests and tasks (grid sizes, byte
// counts, scalars): any text must end in a value or an expression_error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "evaluator/api/expression.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const ptxbench::name_values names{{"M", 4096}, {"N", 1}, {"K", 9223372036854775807LL}, {"D", -1}};
  try {
    ptxbench::eval_int(text, names);
  } catch (const ptxbench::expression_error&) {
  }
  try {
    ptxbench::eval_real(text, names);
  } catch (const ptxbench::expression_error&) {
  }
  try {
    ptxbench::check_expression(text, names);
  } catch (const ptxbench::expression_error&) {
  }
  return 0;
}
