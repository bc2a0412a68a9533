// sass_table: the PTX -> SASS table, data embedded at build time from
// sass_table.json so the binary needs no source tree at run time.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "evaluator/compile/compile.hpp"
#include "ptxbench/sass_table_json.hpp"

namespace ptxbench {
namespace {

using table = std::map<std::string, std::vector<sass_mapping>>;

// The embedded table is part of the build: a malformed one is a bug, reported
// with the JSON path of the bad field.
table parse_table() {
  const nlohmann::json doc = nlohmann::json::parse(generated::sass_table_json);
  table out;
  for (const auto& [arch, entries] : doc.items()) {
    if (arch.rfind("_", 0) == 0) continue;  // "_comment"
    for (size_t i = 0; i < entries.size(); ++i) {
      const nlohmann::json& e = entries[i];
      const std::string where = "sass_table.json: $." + arch + "[" + std::to_string(i) + "]";
      if (!e.contains("ptx") || !e["ptx"].is_string() || !e.contains("sass") || !e["sass"].is_array()) {
        throw std::logic_error(where + ": needs \"ptx\" (string) and \"sass\" (array)");
      }
      sass_mapping m;
      m.ptx = e["ptx"].get<std::string>();
      m.sass_opcodes = e["sass"].get<std::vector<std::string>>();
      m.is_math = e.value("math", false);
      m.ptx_excludes = e.value("ptx_exclude", std::vector<std::string>{});
      m.work = e.value("work", m.is_math ? std::string("math") : std::string("per_cta"));
      if (m.work != "math" && m.work != "load_bytes" && m.work != "smem_bytes" && m.work != "per_step" &&
          m.work != "per_cta")
        throw std::logic_error(where + ": unknown \"work\" '" + m.work + "'");
      m.work_opcodes = e.value("work_sass", m.sass_opcodes);
      m.min_bytes_per_exec = e.value("min_bytes_per_exec", 0.0);
      out[arch].push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace

std::vector<sass_mapping> sass_table(const std::string& arch) {
  static const table all = parse_table();
  if (auto it = all.find(arch); it != all.end()) return it->second;
  // "sm_90" and "sm_90a" lower these instructions alike.
  if (auto it = all.find(arch + "a"); it != all.end()) return it->second;
  return {};
}

bool sass_opcode_matches(const sass_instruction& inst, const std::string& table_opcode) {
  // The full opcode is the first word of the text after any predicate.
  std::string_view text = inst.text;
  if (!text.empty() && text[0] == '@') {
    const size_t space = text.find(' ');
    if (space == std::string_view::npos) return false;
    text.remove_prefix(space + 1);
  }
  const std::string_view opcode = text.substr(0, text.find(' '));
  if (opcode.size() < table_opcode.size() || opcode.compare(0, table_opcode.size(), table_opcode) != 0) return false;
  return opcode.size() == table_opcode.size() || opcode[table_opcode.size()] == '.';
}

}  // namespace ptxbench
