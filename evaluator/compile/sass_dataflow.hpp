#pragma once
// Which load an instruction waits on. A warp stalled on a scoreboard (long:
// global/local memory; short: shared memory, MIO) is sampled at the instruction
// that consumes the load's register, not at the load: the profile attributes
// such samples to the load's line instead, so a spilled accumulator shows at its
// ld.local and a bank-conflicting layout at its ldmatrix/ld.shared.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evaluator/compile/compile.hpp"

namespace ptxbench {

// Per function: the offset of each instruction that reads a register last
// written by a load (LDS, LDSM, LDL, LDG, LD) -> that load's offset (the latest
// one when several of its registers come from loads). Program order, read
// twice per function so that a register loaded at the bottom of a loop and used
// at its top is found (where a BRA follows both: the branch back); a register
// written by anything else in between is no longer the load's. A SASS operand's register is "R<n>" (RZ, URn, Pn are not).
// The instruction right after a `DEPBAR.LE SBn, k` (cp.async.wait_group) maps
// to the DEPBAR instead: a warp held there is sampled one instruction on, as a
// long-scoreboard stall (H100: 18% of a one-stage cp.async mutant's samples
// at the `mov %r, %tid.x` that ptxas placed after the wait).
std::map<std::string, std::map<uint64_t, uint64_t>> awaited_loads(const std::vector<sass_instruction>& listing);

}  // namespace ptxbench
