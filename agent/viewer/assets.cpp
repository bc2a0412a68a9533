#include "agent/viewer/assets.hpp"

namespace ptxbench::viewer {

const embedded_file* find_asset(std::string_view name) {
  for (const auto& f : embedded_files()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string_view content_type_of(std::string_view name) {
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace ptxbench::viewer
