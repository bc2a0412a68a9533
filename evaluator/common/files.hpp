#pragma once
// Reading the files users give ptxbench (tasks, configs, scripts, PTX,
// manifests). Failures are input_error naming the file.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench {

// Largest file read by default: far above any task, config, PTX or manifest.
inline constexpr size_t k_max_input_file_bytes = 64u << 20;

// The whole file as text. Throws input_error "<path>: cannot open <what>",
// "<path>: is a directory, not a file <what>" or "<path>: larger than N bytes <what>".
std::string read_text_file(const std::filesystem::path& path, const std::string& what = "",
                           size_t max_bytes = k_max_input_file_bytes);

// The file parsed as JSON. Throws input_error "<path>: cannot open <what>" or
// "<path>: invalid JSON: <parser message>".
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what = "");

}  // namespace ptxbench
