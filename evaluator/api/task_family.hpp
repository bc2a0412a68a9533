#pragma once
// Task families: a family file (tasks/families/<family>.json) declares the
// variants of one operation once, and expands into tasks (docs/task-suite.md,
// docs/task-authoring.md). Its parts:
//   "base":      a partial task document every variant starts from;
//   "axes":      [{"name": "dtype", "values": {"bf16": {patch}, ...}}, ...]:
//                each variant picks one value per axis, and the value's patch
//                is merged in, axis after axis (a later axis wins);
//   "size_sets": named patches (sizes, size_rules, constraints, text) that a
//                document picks with "size_set": "<name>"; they sit under it
//                (the document's own fields win);
//   "variants":  [{"id": ..., "variant": {"dtype": "bf16", ...}, ...patch}]:
//                the variant's own fields win over everything.
// A patch merges like a JSON merge patch (RFC 7386: objects merge member by
// member, anything else replaces, null removes). A patch's "text" object
// defines fragments; every string of the expanded document has its
// ${name} replaced by the fragment (fragments may use fragments), by the
// variant's axis value (${dtype}) or by ${id} / ${family}. The expanded
// document is then parsed by parse_task like a hand-written task file.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench {

// Bounds on a family file: far above the suite's and below anything that
// could make expansion slow.
inline constexpr size_t k_max_family_variants = 1024;
inline constexpr size_t k_max_text_chars = 64 * 1024;
inline constexpr int k_max_text_depth = 8;

// The task documents of a family file, in variant order, each with "family",
// "variant" and every fragment filled in. Throws input_error naming `source`,
// the variant and the JSON path (an axis value the axis lacks, an axis not
// given, an unknown ${name}, an unknown size set...).
std::vector<nlohmann::json> expand_family(const nlohmann::json& family, const std::string& source);

// Reads, expands and parses every variant of a family file.
std::vector<task> expand_family_file(const std::filesystem::path& path);

}  // namespace ptxbench
