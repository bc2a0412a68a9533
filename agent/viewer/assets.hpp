#pragma once
// The viewer's CSS and JS, embedded into the binary at build time from
// agent/viewer/assets/ (embed_assets.cmake), served under /assets/<name>.
#include <string_view>
#include <vector>

namespace ptxbench::viewer {

struct embedded_file {
  std::string_view name;  // file name inside assets/
  std::string_view body;
};

// Every embedded file, sorted by name (defined in the generated source).
const std::vector<embedded_file>& embedded_files();

// The file called `name`, or nullptr.
const embedded_file* find_asset(std::string_view name);
// MIME type from the file extension ("text/css; charset=utf-8", ...).
std::string_view content_type_of(std::string_view name);

}  // namespace ptxbench::viewer
