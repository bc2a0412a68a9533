#pragma once
// Mutation operators: text transformations of a verified solution (PTX module
// and launch manifest) that reproduce the mistakes models make, each aimed at
// the stage that should reject it. README.md has the catalogue with examples.
//
// Contract of an operator: deterministic given the rng's state; returns
// nullopt ("not applicable") when the pattern it edits is absent; never
// throws for odd input (a manifest that does not parse is "not applicable").
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench::mutate {

// A whole-kernel rewrite of the task by other means (e.g. on the CUDA cores),
// correct but not what the task asks for: tasks/solutions/<task>/rewrites/<name>/.
struct rewrite {
  std::string name;
  std::string ptx;
  std::string manifest_text;
};

struct solution {
  std::string ptx;
  std::string manifest_text;
  std::vector<rewrite> rewrites;
};

struct mutant {
  std::string ptx;
  std::string manifest_text;
  bool manifest_block = true;  // false: the reply carries no ```json block
  std::string change;          // one line: what was changed, for the table and the store
  // The mutated region: 1-based lines of the mutant's PTX that differ from the
  // solution (inserted or replaced; a deletion marks the line after it),
  // filled by apply_operator. Profile feedback is judged on it: the hottest
  // line should fall here.
  std::vector<int> lines;
};

using apply_fn = std::optional<mutant> (*)(const task& t, const solution& s, std::mt19937_64& rng);

struct mutation_operator {
  const char* name;
  stage target;  // the stage whose failure makes the mutant worth keeping
  const char* summary;
  apply_fn apply;
  // Performance operators: the PC-sampling stall reasons (profile_line::stall)
  // that the mutation causes, comma-separated; nullptr where the slowdown has
  // no line of its own (e.g. register pressure after setmaxnreg is removed).
  const char* stalls = nullptr;
};

// Every operator, grouped by target stage in judging order.
const std::vector<mutation_operator>& catalogue();
// nullptr for an unknown name.
const mutation_operator* find_operator(const std::string& name);

// Applies `op` with an rng seeded from (seed, operator name, task id, variant),
// so one seed gives the same mutants on every machine.
std::optional<mutant> apply_operator(const mutation_operator& op, const task& t, const solution& s, uint64_t seed,
                                     int variant);

// The 1-based lines of `mutant` that are not in `original`, for edits that
// replace or insert lines in place (a removed line marks the line after it).
std::vector<int> changed_lines(const std::string& original, const std::string& mutant);

// Whether profile line `line` falls in the mutated region: on a changed line
// or within `slack` lines of one (a stall is sampled on the instruction that
// waits, which may be the one after an inserted sleep or fence).
bool in_region(const std::vector<int>& region, int line, int slack = 2);

// The reply a model would have written: the PTX and (unless left out) the
// manifest as fenced blocks, which extract_candidate reads back.
std::string render_reply(const std::string& ptx, const std::string& manifest_text, bool manifest_block);

// Operator groups, one per file.
void add_format_compile_operators(std::vector<mutation_operator>& out);
void add_runtime_operators(std::vector<mutation_operator>& out);
void add_correctness_operators(std::vector<mutation_operator>& out);
void add_instruction_performance_operators(std::vector<mutation_operator>& out);
void add_layout_performance_operators(std::vector<mutation_operator>& out);

}  // namespace ptxbench::mutate
