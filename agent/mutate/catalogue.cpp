#include <algorithm>
#include <cstring>

#include "agent/mutate/mutation.hpp"
#include "agent/mutate/ptx_edit.hpp"
#include "evaluator/common/hash.hpp"

namespace ptxbench::mutate {

const std::vector<mutation_operator>& catalogue() {
  static const std::vector<mutation_operator> all = [] {
    std::vector<mutation_operator> v;
    add_format_compile_operators(v);
    add_runtime_operators(v);
    add_correctness_operators(v);
    add_instruction_performance_operators(v);
    add_layout_performance_operators(v);
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
    std::optional<mutant> m = op.apply(t, s, rng);
    if (m) m->lines = changed_lines(s.ptx, m->ptx);
    return m;
  } catch (const std::exception&) {
    // A regex or number conversion that met text it did not expect: the
    // pattern is not there in the form the operator edits.
    return std::nullopt;
  }
}

std::vector<int> changed_lines(const std::string& original, const std::string& mutant) {
  const std::vector<std::string> a = split_lines(original), b = split_lines(mutant);
  std::vector<int> out;
  size_t i = 0, j = 0;
  while (j < b.size()) {
    if (i < a.size() && a[i] == b[j]) {
      ++i, ++j;
      continue;
    }
    // Lines inserted here: the original's line reappears a few lines on.
    size_t ahead = 1;
    while (ahead <= 8 && j + ahead < b.size() && !(i < a.size() && a[i] == b[j + ahead])) ++ahead;
    if (ahead <= 8 && j + ahead < b.size() && i < a.size() && a[i] == b[j + ahead]) {
      for (size_t k = 0; k < ahead; ++k) out.push_back(int(j + k + 1));
      j += ahead;
      continue;
    }
    // Lines removed here: the mutant's line reappears a few lines on in the original.
    size_t gone = 1;
    while (gone <= 8 && i + gone < a.size() && a[i + gone] != b[j]) ++gone;
    if (gone <= 8 && i + gone < a.size() && a[i + gone] == b[j]) {
      out.push_back(int(j + 1));
      i += gone;
      continue;
    }
    out.push_back(int(j + 1));  // replaced in place
    ++i, ++j;
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool in_region(const std::vector<int>& region, int line, int slack) {
  return std::any_of(region.begin(), region.end(), [&](int r) { return line >= r - slack && line <= r + slack; });
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
