#include <cstring>

#include "agent/mutate/mutation.hpp"
#include "evaluator/common/hash.hpp"

namespace ptxbench::mutate {
namespace {


}  // namespace

const std::vector<mutation_operator>& catalogue() {
  static const std::vector<mutation_operator> all = [] {
    std::vector<mutation_operator> v;
    add_format_compile_operators(v);
    add_runtime_operators(v);
    add_correctness_operators(v);
    add_instruction_performance_operators(v);
    return v;
  }();
  return all;
}

const mutation_operator* find_operator(const std::string& name) {
  for (const auto& op : catalogue())
    if (name == op.name) return &op;
  return nullptr;
}

std::optional<mutant> apply_operator(const mutation_operator& op, const task& t, const solution& s, uint64_t seed,
                                     int variant) {
  uint64_t h = fnv1a(op.name, fnv1a(t.id, fnv1a(std::to_string(seed) + "/" + std::to_string(variant))));
  std::mt19937_64 rng(h);
  try {
    return op.apply(t, s, rng);
  } catch (const std::exception&) {
    // A regex or number conversion that met text it did not expect: the
    // pattern is not there in the form the operator edits.
    return std::nullopt;
  }
}

std::string render_reply(const std::string& ptx, const std::string& manifest_text, bool manifest_block) {
  std::string reply = "Here is the kernel.\n\n```ptx\n" + ptx;
  if (!ptx.empty() && ptx.back() != '\n') reply += "\n";
  reply += "```\n";
  if (manifest_block) {
    reply += "\n```json\n" + manifest_text;
    if (!manifest_text.empty() && manifest_text.back() != '\n') reply += "\n";
    reply += "```\n";
  }
  return reply;
}

}  // namespace ptxbench::mutate
