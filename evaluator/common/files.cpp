#include "evaluator/common/files.hpp"

#include <fstream>

#include "evaluator/common/json_path.hpp"

namespace ptxbench {

std::string read_text_file(const std::filesystem::path& path, const std::string& what, size_t max_bytes) {
  const std::string named = what.empty() ? "" : " " + what;
  std::error_code ec;
  // A directory opens as an empty stream and /dev/zero never ends: both must be
  // errors, not an empty or endless read.
  if (std::filesystem::is_directory(path, ec)) throw input_error(path.string() + ": is a directory, not a file" + named);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path.string() + ": cannot open" + named);
  std::string text;
  char buffer[65536];
  while (in) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw input_error(path.string() + ": larger than " + std::to_string(max_bytes) + " bytes" + named);
  }
  if (in.bad()) throw input_error(path.string() + ": read error" + named);
  return text;
}

nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what) {
  return parse_json_bounded(read_text_file(path, what), path.string());
}

}  // namespace ptxbench
