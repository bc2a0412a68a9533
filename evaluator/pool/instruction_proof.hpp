#pragma once
// The dynamic half of the instructions stage, done in the supervisor: the
// worker returns executed counts per SASS PC; they are mapped to opcodes
// through the disassembly of the very cubin that ran, and a math instruction
// must carry most of the task's FLOPs (executed count x FLOPs per instruction).
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/pool/protocol.hpp"

namespace ptxbench {

// Share of the task's FLOPs a targeted math instruction must execute.
inline constexpr double k_min_flop_share = 0.9;

// Fills executed, flop_share, passed and note of every check, and
// executed_by_opcode (the most executed opcodes), from `counts`. Sets dynamic_ran.
void apply_dynamic_counts(instruction_report& report, const sass_listing& sass, const protocol::dynamic_counts& counts);

// The stage outcome from a report. `dynamic_missing` says why no dynamic
// count exists (empty when it ran); a stage without dynamic proof is at best
// unverified, never passed.
stage_outcome instruction_outcome(const instruction_report& report, const std::string& dynamic_missing);

}  // namespace ptxbench
