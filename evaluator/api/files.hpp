#pragma once
// Reading the files users give ptxbench (tasks, configs, scripts, PTX,
// manifests). Failures are input_error naming the file.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench {

// The whole file as text. Throws input_error "<path>: cannot open <what>".
std::string read_text_file(const std::filesystem::path& path, const std::string& what = "");

// The file parsed as JSON. Throws input_error "<path>: cannot open <what>" or
// "<path>: invalid JSON: <parser message>".
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what = "");

}  // namespace ptxbench
