#pragma once
// The dynamic half of the instructions stage, done in the supervisor: the
// workers return executed counts per SASS PC, one instrumented pass per
// (counted size, launch); they are mapped to opcodes through the disassembly
// of the very cubin that ran, and each target must have done its work at
// every counted size (the smallest and the timed one):
//
//   math targets (wgmma, mma.sync, tcgen05.mma): the executed instructions of
//     the task's operand type carry >= k_min_flop_share of the task's FLOPs,
//     and math the task did not target (FFMA/FMUL/FADD, HFMA2..., DFMA...,
//     mma.sync where it is no target, tensor-core math on another type) carries
//     <= k_max_other_math_share of the math the kernel had to do
//     (other_math_denominator), so a tensor-core instruction issued beside
//     FFMA that does the real work does not pass;
//   TMA (cp.async.bulk.tensor): executed loads (UTMALDG, not stores) move at
//     least k_min_moved_share of the bytes of the inputs that have tensor maps
//     (a lower bound: executions x the smallest input box of the launch, or
//     the input bytes minus what the other global reads executed could carry,
//     whichever is larger);
//   ldmatrix: executions x 128 bytes >= k_min_moved_share of the input bytes;
//   mbarrier waits: at least once per pipeline step, a step being at least one
//     per CTA and one per TMA load of each input tensor map;
//   any other target: at least once per CTA launched.
// Counts are warp-level (one per warp that issued the instruction).
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/manifest.hpp"
#include "evaluator/api/task.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench {

inline constexpr double k_min_flop_share = 0.9;
inline constexpr double k_max_other_math_share = 0.10;
inline constexpr double k_min_moved_share = 0.5;

// What other math is measured against at one counted size: the task's FLOPs,
// or the FLOPs the target executed where that is more. A tile padded past the
// size (a decode query padded to wgmma's 64 rows, a 17-key block in a 128-wide
// tile) runs the target and its epilogue or softmax on the padding alike, so
// the honest ratio of the two is kept; the task's FLOPs alone would charge the
// padding's softmax or address arithmetic as math done instead of the target.
// A kernel that computes the result with other math must still have the target
// execute ten times that work to pass (measured against the task's FLOPs it
// carries >= k_min_flop_share of them anyway), and is then slow.
double other_math_denominator(double task_flops, double target_flops);

// Other math every honest kernel does per output element whatever the size:
// an epilogue (bias, GELU-tanh, alpha/beta, fp8 scales), a split-K reduction
// or a split-KV combine, the softmax's final normalisation. It is allowed on
// top of the share above; at a tiny hidden size (K = 8, a 5-key sequence) it
// outweighs the task's FLOPs, while at the timed size it is under 1% of them,
// so a kernel that computes its result with other math still fails there.
inline constexpr double k_epilogue_flops_per_output = 64;

// Global-memory reads that do not go through TMA (LDG, LD, LDGSTS, ATOM,
// texture and surface loads): at most 32 lanes x the width the instruction
// names (.128: 16 bytes, .64: 8, .U16/.S16: 2, .U8/.S8: 1, none: 4; texture
// and surface loads 16). Every input byte is read at least once, so the inputs
// minus what these could have carried arrived by TMA: a floor on TMA's bytes
// beside the one from box sizes (which is far below the truth when the boxes
// differ, as a decode's 8-row query box beside its 64-row key/value boxes).
// 0 for an instruction that reads no global memory.
double global_read_bytes_per_exec(const sass_instruction& inst);

// What the supervisor knows of one launch at one size, from the manifest.
struct launch_facts {
  int64_t ctas = 1;
  double min_input_box_bytes = 0;  // smallest tensor-map box over input tensors (0: none)
  int input_maps = 0;              // tensor maps over input tensors
};

// The counts of one size: every launch's pass.
struct size_counts {
  std::string size;             // "M=384 N=256 K=1024"
  double task_flops = 0;
  double input_bytes = 0;       // all input tensors
  double mapped_input_bytes = 0;  // input tensors that some launch describes by a tensor map
  double output_elements = 0;   // all output tensors
  std::vector<launch_facts> launches;
  std::vector<std::vector<protocol::pc_count>> counts;  // per launch
};

// The smallest size (by tensor volume) and the timed one: where executed
// instructions are counted. One entry when they are the same size.
std::vector<int> counted_size_indexes(const task& t);

// The facts of every launch of `m` at `s` (grid expressions evaluated; a bad
// expression counts as one CTA).
size_counts counted_size_facts(const task& t, const manifest& m, const size_point& s);

// Fills executed, flop_share, sizes, passed and note of every check,
// other_math_share and executed_by_opcode, from the counts of every counted
// size. Sets dynamic_ran.
void apply_dynamic_counts(instruction_report& report, const sass_listing& sass, const task& t,
                          const std::vector<size_counts>& sizes);

// FLOPs of one warp-level execution of any math instruction (tensor-core or
// scalar: FFMA 64, FMUL 32, HFMA2 128, DFMA 64...), 0 for others.
double math_flops_per_exec(const sass_instruction& inst);
// The operand type of a math instruction ("BF16", "F16", "E4M3", "TF32", "S8", "F32", "F64"), "" when not math.
std::string math_operand_type(const sass_instruction& inst);

// The stage outcome from a report. `dynamic_missing` says why no dynamic
// count exists (empty when it ran); a stage without dynamic proof is at best
// unverified, never passed.
stage_outcome instruction_outcome(const instruction_report& report, const std::string& dynamic_missing);

}  // namespace ptxbench
