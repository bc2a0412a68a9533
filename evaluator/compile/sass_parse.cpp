#include "evaluator/compile/sass_parse.hpp"

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

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

std::optional<std::vector<sass_instruction>> parse_nvdisasm_json(const std::string& json_text) {
  const nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) return std::nullopt;
  std::vector<sass_instruction> out;
  bool found_functions = false;
  for (const nlohmann::json& part : doc) {
    if (!part.is_array()) continue;
    for (const nlohmann::json& function : part) {
      if (!function.is_object() || !function.contains("function-name") || !function.contains("sass-instructions")) {
        continue;
      }
      found_functions = true;
      const std::string name = function["function-name"].get<std::string>();
      const nlohmann::json& instructions = function["sass-instructions"];
      if (!instructions.is_array()) return std::nullopt;
      if (function.contains("length") && function["length"].is_number_unsigned() &&
          function["length"].get<uint64_t>() != instructions.size() * sass_instruction_bytes) {
        return std::nullopt;  // not one entry per 16-byte instruction: offsets would be wrong
      }
      uint64_t offset = 0;
      for (const nlohmann::json& inst : instructions) {
        auto text_of = [&](const char* key) {
          return inst.contains(key) && inst[key].is_string() ? inst[key].get<std::string>() : std::string();
        };
        out.push_back(
            make_sass_instruction(name, offset, text_of("predicate"), text_of("opcode"), text_of("operands")));
        offset += sass_instruction_bytes;
      }
    }
  }
  if (!found_functions) return std::nullopt;
  return out;
}

std::vector<sass_instruction> parse_nvdisasm_text(const std::string& text) {
  static const std::regex section(R"(^\s*\.section\s+\.text\.([^,\s]+))");
  static const std::regex instruction(R"(^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;)");
  std::vector<sass_instruction> out;
  std::string function;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, section)) {
      function = m[1];
      continue;
    }
    if (function.empty() || !std::regex_search(line, m, instruction)) continue;
    const uint64_t offset = std::stoull(m[1], nullptr, 16);
    std::string body = m[2];
    std::string predicate;
    if (!body.empty() && body[0] == '@') {
      const size_t space = body.find_first_of(" \t");
      predicate = body.substr(0, space);
      body = space == std::string::npos ? "" : body.substr(body.find_first_not_of(" \t", space));
    }
    const size_t space = body.find_first_of(" \t");
    const std::string opcode = body.substr(0, space);
    const std::string operands = space == std::string::npos ? "" : body.substr(body.find_first_not_of(" \t", space));
    out.push_back(make_sass_instruction(function, offset, predicate, opcode, operands));
  }
  return out;
}

}  // namespace ptxbench
