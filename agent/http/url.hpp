#pragma once
// The schemes the transport speaks (transport.cpp restricts libcurl to them):
// a header of its own, so that config readers check a URL without libcurl.
#include <cctype>
#include <string>

namespace ptxbench::http {

// Whether `url` starts with http:// or https:// (in any case).
inline bool is_http_url(const std::string& url) {
  auto starts = [&](const std::string& scheme) {
    if (url.size() < scheme.size()) return false;
    for (size_t i = 0; i < scheme.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(url[i])) != scheme[i]) return false;
    return true;
  };
  return starts("http://") || starts("https://");
}

}  // namespace ptxbench::http
