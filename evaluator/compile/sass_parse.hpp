#pragma once
// Reading nvdisasm output into SASS instructions. Internal to the compile
// library; exposed for tests.
#include <optional>
#include <string>
#include <vector>

#include "evaluator/compile/compile.hpp"

namespace ptxbench {

// Every SASS instruction of sm_70 and later is 16 bytes, so the n-th
// instruction of a function sits at byte offset 16 n from the function start.
constexpr uint64_t sass_instruction_bytes = 16;

// `nvdisasm --emit-json` output (schema 13.x): a top-level array whose second
// element lists functions as {"function-name", "start", "length",
// "sass-instructions": [{"predicate"?, "opcode", "operands"?}]}. Instructions
// carry no address; offsets are 16 × index, checked against "length".
// nullopt when the text is not that shape.
std::optional<std::vector<sass_instruction>> parse_nvdisasm_json(const std::string& json_text);

// Plain `nvdisasm -c` output: ".section .text.<function>" headers and
// "/*0040*/  @P0 BRA `(.L_x_0) ;" lines. Offsets are section-relative, which
// is function-relative for kernels (one per section; device functions the
// kernel calls are appended to its section and counted as part of it).
std::vector<sass_instruction> parse_nvdisasm_text(const std::string& text);

// parse_nvdisasm_text, kept only when the listing is whole: at least one
// instruction, each function's section seen once, and its offsets 0, 16, 32...
// without a gap or a repeat (a line the reader skipped would leave one).
// nullopt otherwise.
std::optional<std::vector<sass_instruction>> parse_nvdisasm_text_checked(const std::string& text);

// Builds an instruction from its parts: `opcode` with modifiers
// ("HGMMA.64x128x16.F32.BF16"), the predicate ("@P0", "@!UP0") or "", and the
// operand text; fills the base opcode and the full text.
sass_instruction make_sass_instruction(std::string function, uint64_t offset, const std::string& predicate,
                                       const std::string& opcode, const std::string& operands);

}  // namespace ptxbench
