// The static half of the instructions stage: is each targeted instruction
// written in the PTX, and did ptxas keep it in the SASS? Plus the FLOPs a
// math SASS instruction performs, which the dynamic half multiplies by its
// executed count.
#include <map>
#include <regex>

#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/ptx_text.hpp"

namespace ptxbench {
namespace {

bool has_prefix_at_dot(const std::string& word, const std::string& prefix) {
  if (word.size() < prefix.size() || word.compare(0, prefix.size(), prefix) != 0) return false;
  return word.size() == prefix.size() || word[prefix.size()] == '.';
}

// Counts instruction words naming `target` (and none of `excludes`). Only
// words in instruction position count: at the start of a statement, after a
// label or after a predicate guard, so a label or parameter that happens to be
// called `ldmatrix` does not.
int count_ptx_instruction(const std::vector<ptx_text::token>& tokens, const std::string& target,
                          const std::vector<std::string>& excludes) {
  int count = 0;
  bool at_statement_start = true;
  bool in_guard = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const ptx_text::token& t = tokens[i];
    if (!t.is_word) {
      if (t.text == "@") {
        in_guard = true;
      } else if (in_guard && t.text == "!") {
        continue;
      } else {
        in_guard = false;
        at_statement_start = t.text == ";" || t.text == "{" || t.text == "}" || t.text == ":";
      }
      continue;
    }
    if (in_guard) {  // the predicate register of "@%p1" / "@!%p1"
      in_guard = false;
      at_statement_start = true;
      continue;
    }
    const bool is_label = i + 1 < tokens.size() && tokens[i + 1].text == ":";
    if (at_statement_start && !is_label && has_prefix_at_dot(t.text, target)) {
      bool excluded = false;
      for (const std::string& e : excludes) excluded = excluded || has_prefix_at_dot(t.text, e);
      if (!excluded) ++count;
    }
    at_statement_start = false;
  }
  return count;
}

std::string full_opcode(const sass_instruction& inst) {
  std::string_view text = inst.text;
  if (!text.empty() && text[0] == '@') text.remove_prefix(std::min(text.size(), text.find(' ') + 1));
  return std::string(text.substr(0, text.find(' ')));
}

// The destination operand; RZ means the instruction writes no result (ptxas
// pads wgmma sequences with "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT").
bool writes_nothing(const sass_instruction& inst) {
  const std::string opcode = full_opcode(inst);
  const size_t at = inst.text.find(opcode) + opcode.size();
  const std::string operands = inst.text.substr(std::min(at + 1, inst.text.size()));
  return operands.rfind("RZ,", 0) == 0 || operands == "RZ";
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

}  // namespace

double sass_instruction_flops(const sass_instruction& inst) {
  const sass_class_info c = classify_sass(inst);
  return c.kind == sass_kind::tensor && c.flops > 0 ? c.flops : 0.0;
}

instruction_report static_instruction_check(const task& t, const std::string& ptx, const sass_listing& sass) {
  instruction_report report;
  report.sass_source = sass.available ? sass.source : "";
  const std::vector<ptx_text::token> tokens = ptx_text::tokenize(ptx_text::blank_comments_and_strings(ptx));
  const std::vector<sass_mapping> table = sass_table(t.arch);
  report.static_passed = true;
  for (const std::string& target : t.target_instructions) {
    instruction_check check;
    check.ptx = target;
    const sass_mapping* mapping = nullptr;
    for (const sass_mapping& m : table) {
      if (m.ptx == target) mapping = &m;
    }
    check.ptx_count =
        count_ptx_instruction(tokens, target, mapping ? mapping->ptx_excludes : std::vector<std::string>{});
    if (mapping) {
      check.sass_opcodes = mapping->sass_opcodes;
      check.is_math = mapping->is_math;
    }
    if (mapping && sass.available) {
      check.sass_count = 0;
      for (const sass_instruction& inst : sass.instructions) {
        if (check.is_math && writes_nothing(inst)) continue;
        for (const std::string& op : mapping->sass_opcodes) {
          if (sass_opcode_matches(inst, op)) {
            ++check.sass_count;
            break;
          }
        }
      }
    }
    const std::string opcodes = join(check.sass_opcodes, "/");
    if (check.ptx_count == 0) {
      check.note = target + " does not appear in the PTX";
    } else if (!mapping) {
      check.note = "no SASS mapping for " + target + " on " + t.arch + "; cannot confirm it in the SASS";
    } else if (!sass.available) {
      check.note = "SASS unavailable: " + sass.error;
    } else if (check.sass_count == 0) {
      check.note = target + " is in the PTX " + std::to_string(check.ptx_count) + " times but the SASS has no " +
                   opcodes + ": ptxas removed it (is its result used?)";
    }
    check.passed = check.ptx_count > 0 && check.sass_count > 0;
    report.static_passed = report.static_passed && check.passed;
    report.checks.push_back(std::move(check));
  }
  return report;
}

}  // namespace ptxbench
