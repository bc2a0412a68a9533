// The header values the server checks or rewrites: plain text functions,
// apart from cpp-httplib so that they can be tested on their own.
#include <cctype>
#include <limits>

#include "agent/http/server.hpp"

namespace ptxbench::http {
namespace {
bool same_name(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}
}  // namespace

std::string request::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (same_name(k, name)) return v;
  return "";
}

bool valid_request_id(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

std::string without_brotli(const std::string& accept_encoding) {
  std::string out;
  size_t start = 0;
  while (start <= accept_encoding.size()) {
    size_t comma = accept_encoding.find(',', start);
    if (comma == std::string::npos) comma = accept_encoding.size();
    std::string item = accept_encoding.substr(start, comma - start);
    start = comma + 1;
    const size_t b = item.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    item = item.substr(b, item.find_last_not_of(" \t") - b + 1);
    std::string name = item.substr(0, item.find(';'));
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (name.find("br") != std::string::npos) continue;  // httplib looks for "br" anywhere in the header
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

std::optional<size_t> parse_content_length(const std::string& value) {
  if (value.empty()) return std::nullopt;
  size_t n = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    const size_t digit = size_t(c - '0');
    if (n > (std::numeric_limits<size_t>::max() - digit) / 10) return std::numeric_limits<size_t>::max();
    n = n * 10 + digit;
  }
  return n;
}

}  // namespace ptxbench::http
