#include "evaluator/compile/sass_parse.hpp"

#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "evaluator/compile/ptx_text.hpp"

namespace ptxbench {

sass_instruction make_sass_instruction(std::string function, uint64_t offset, const std::string& predicate,
                                       const std::string& opcode, const std::string& operands) {
  sass_instruction inst;
  inst.function = std::move(function);
  inst.offset = offset;
  inst.opcode = opcode.substr(0, opcode.find('.'));
  inst.text = predicate.empty() ? opcode : predicate + " " + opcode;
  if (!operands.empty()) {
    // JSON operands come without spaces ("R24,gdesc[UR4],R24"); write them as
    // the text disassembly does.
    std::string spaced;
    for (size_t i = 0; i < operands.size(); ++i) {
      spaced += operands[i];
      if (operands[i] == ',' && i + 1 < operands.size() && operands[i + 1] != ' ') spaced += ' ';
    }
    inst.text += " " + spaced;
  }
  return inst;
}

// nvdisasm's JSON: [header, [function, ...]], each function with its name,
// "start" and "length" in bytes and one entry per 16-byte instruction. A
// kernel's "length" may span device subroutines that follow it in the list as
// functions of their own (nvdisasm 13.0: `$__internal_..._slowpath` inside
// attention forward's section); they are read as the text listing reads them,
// part of the kernel's section, at their offset from its start. A span the
// listed instructions do not fill exactly is refused: offsets would be wrong.
std::optional<std::vector<sass_instruction>> parse_nvdisasm_json(const std::string& json_text) {
  const nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) return std::nullopt;
  struct listed {
    std::string name;
    std::optional<uint64_t> start, length;
    const nlohmann::json* instructions;
  };
  std::vector<listed> functions;
  for (const nlohmann::json& part : doc) {
    if (!part.is_array()) continue;
    for (const nlohmann::json& function : part) {
      if (!function.is_object() || !function.contains("function-name") || !function.contains("sass-instructions")) {
        continue;
      }
      if (!function["function-name"].is_string() || !function["sass-instructions"].is_array()) return std::nullopt;
      listed f{function["function-name"].get<std::string>(), std::nullopt, std::nullopt, &function["sass-instructions"]};
      if (function.contains("start") && function["start"].is_number_unsigned()) f.start = function["start"].get<uint64_t>();
      if (function.contains("length") && function["length"].is_number_unsigned())
        f.length = function["length"].get<uint64_t>();
      functions.push_back(std::move(f));
    }
  }
  if (functions.empty()) return std::nullopt;
  std::vector<sass_instruction> out;
  const auto add = [&out](const std::string& name, uint64_t first_offset, const nlohmann::json& instructions) {
    uint64_t offset = first_offset;
    for (const nlohmann::json& inst : instructions) {
      auto text_of = [&](const char* key) {
        return inst.contains(key) && inst[key].is_string() ? inst[key].get<std::string>() : std::string();
      };
      out.push_back(make_sass_instruction(name, offset, text_of("predicate"), text_of("opcode"), text_of("operands")));
      offset += sass_instruction_bytes;
    }
  };
  for (size_t i = 0; i < functions.size(); ++i) {
    const listed& f = functions[i];
    const uint64_t own = f.instructions->size() * sass_instruction_bytes;
    add(f.name, 0, *f.instructions);
    if (!f.length || *f.length == own) continue;
    if (!f.start || *f.length < own) return std::nullopt;
    // The rest of the span: the subroutines listed next, back to back.
    uint64_t next = *f.start + own;
    const uint64_t end = *f.start + *f.length;
    while (next < end) {
      if (++i >= functions.size()) return std::nullopt;
      const listed& sub = functions[i];
      const uint64_t bytes = sub.instructions->size() * sass_instruction_bytes;
      if (!sub.start || *sub.start != next || bytes == 0 || (sub.length && *sub.length != bytes)) return std::nullopt;
      add(f.name, next - *f.start, *sub.instructions);
      next += bytes;
    }
    if (next != end) return std::nullopt;
  }
  return out;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

size_t skip_spaces(std::string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// "\t.section\t.text.<name>,..." -> name.
std::optional<std::string> section_name(std::string_view line) {
  size_t i = skip_spaces(line, 0);
  if (line.compare(i, 8, ".section") != 0) return std::nullopt;
  i += 8;
  const size_t after = skip_spaces(line, i);
  if (after == i || line.compare(after, 6, ".text.") != 0) return std::nullopt;
  i = after + 6;
  size_t end = i;
  while (end < line.size() && line[end] != ',' && !is_space(line[end])) ++end;
  if (end == i) return std::nullopt;
  return std::string(line.substr(i, end - i));
}

struct text_instruction {
  uint64_t offset;
  std::string_view body;
};

// "  /*0010*/   @P0 BRA `(.L_x_0) ;" -> 0x10 and "@P0 BRA `(.L_x_0)".
std::optional<text_instruction> instruction_line(std::string_view line) {
  size_t i = skip_spaces(line, 0);
  if (line.compare(i, 2, "/*") != 0) return std::nullopt;
  i += 2;
  const size_t hex_begin = i;
  while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == hex_begin || line.compare(i, 2, "*/") != 0) return std::nullopt;
  uint64_t offset = 0;
  const auto parsed = std::from_chars(line.data() + hex_begin, line.data() + i, offset, 16);
  if (parsed.ec != std::errc()) return std::nullopt;  // more than 64 bits of address
  i += 2;
  const size_t body_begin = skip_spaces(line, i);
  if (body_begin == i) return std::nullopt;
  const size_t semicolon = line.find(';', body_begin);
  if (semicolon == std::string_view::npos) return std::nullopt;
  size_t body_end = semicolon;
  while (body_end > body_begin && is_space(line[body_end - 1])) --body_end;
  return text_instruction{offset, line.substr(body_begin, body_end - body_begin)};
}

}  // namespace

// Read by hand, not by std::regex, whose recursive matcher overflows the stack
// on long lines.
std::vector<sass_instruction> parse_nvdisasm_text(const std::string& text) {
  std::vector<sass_instruction> out;
  std::string function;
  for (std::string_view line : ptx_text::split_lines(text)) {
    if (auto name = section_name(line)) {
      function = *name;
      continue;
    }
    if (function.empty()) continue;
    const auto inst = instruction_line(line);
    if (!inst) continue;
    std::string_view body = inst->body;
    std::string_view predicate;
    if (!body.empty() && body[0] == '@') {
      const size_t space = body.find_first_of(" \t");
      predicate = body.substr(0, space);
      body = space == std::string_view::npos ? std::string_view() : body.substr(skip_spaces(body, space));
    }
    const size_t space = body.find_first_of(" \t");
    const std::string_view opcode = body.substr(0, space);
    const std::string_view operands =
        space == std::string_view::npos ? std::string_view() : body.substr(skip_spaces(body, space));
    out.push_back(make_sass_instruction(function, inst->offset, std::string(predicate), std::string(opcode),
                                        std::string(operands)));
  }
  return out;
}

std::optional<std::vector<sass_instruction>> parse_nvdisasm_text_checked(const std::string& text) {
  std::vector<sass_instruction> out = parse_nvdisasm_text(text);
  if (out.empty()) return std::nullopt;
  std::set<std::string> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    const bool first = i == 0 || out[i].function != out[i - 1].function;
    if (first) {
      if (!seen.insert(out[i].function).second || out[i].offset != 0) return std::nullopt;
    } else if (out[i].offset != out[i - 1].offset + sass_instruction_bytes) {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace ptxbench
