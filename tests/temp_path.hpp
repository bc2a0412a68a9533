#pragma once
// Scratch files of a test: ctest runs cases in parallel (-j2 in CI) and
// several checkouts on one machine share /tmp, so a fixed name in the
// temporary folder is shared by whoever runs at the same time (a script
// rewritten while another process executes it fails with "Text file busy").
#include <unistd.h>

#include <filesystem>
#include <string>

namespace ptxbench::test {

// `name` in the temporary folder, made this process's own.
inline std::filesystem::path unique_temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name);
}

}  // namespace ptxbench::test
