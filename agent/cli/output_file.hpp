#pragma once
// Files the commands write for the user (export's JSONL, report's HTML and JSON).
#include <filesystem>
#include <string>

namespace ptxbench::cli {

// Writes `text` to a temporary file beside `path`, flushes it to the disk and
// renames it over `path`: a full disk or a crash leaves the file that was
// there (or none), never a partial one, and no temporary file. Throws
// std::runtime_error "cannot write <path>: <the system's reason>".
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace ptxbench::cli
