#include "agent/mutate/ptx_edit.hpp"

#include <sstream>

namespace ptxbench::mutate {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

bool is_instruction(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  char c = line[i];
  if (c == '.' || c == '/' || c == '{' || c == '}' || c == '$' || c == ')') return false;
  return line.find(':') == std::string::npos || line.find(';') != std::string::npos;
}

std::vector<size_t> matching_lines(const std::vector<std::string>& lines, const std::regex& pattern) {
  std::vector<size_t> out;
  for (size_t i = 0; i < lines.size(); ++i)
    if (is_instruction(lines[i]) && std::regex_search(lines[i], pattern)) out.push_back(i);
  return out;
}

size_t pick(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

std::optional<int> declared_registers(const std::string& ptx, const std::string& prefix) {
  static const std::regex decl(R"(\.reg\s+\.\w+\s+(%\w+)<(\d+)>)");
  std::optional<int> best;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), decl); it != std::sregex_iterator(); ++it) {
    if ((*it)[1].str() != prefix) continue;
    int n = std::stoi((*it)[2].str());
    if (!best || n > *best) best = n;
  }
  return best;
}

std::string indent_of(const std::string& line) { return line.substr(0, line.find_first_not_of(" \t")); }

std::vector<std::string> registers_in(const std::string& list) {
  static const std::regex reg(R"(%\w+)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(list.begin(), list.end(), reg); it != std::sregex_iterator(); ++it)
    out.push_back(it->str());
  return out;
}

std::optional<nlohmann::json> parse_manifest_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("launches") || !j["launches"].is_array() ||
      j["launches"].empty())
    return std::nullopt;
  for (const auto& l : j["launches"])
    if (!l.is_object()) return std::nullopt;
  return j;
}

std::string dump_manifest(const nlohmann::json& manifest) { return manifest.dump(2) + "\n"; }

}  // namespace ptxbench::mutate
