#include "evaluator/api/files.hpp"

#include <fstream>
#include <sstream>

#include "evaluator/api/json_path.hpp"

namespace ptxbench {

std::string read_text_file(const std::filesystem::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path.string() + ": cannot open" + (what.empty() ? "" : " " + what));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what) {
  const std::string text = read_text_file(path, what);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw input_error(path.string() + ": invalid JSON: " + e.what());
  }
}

}  // namespace ptxbench
