#pragma once
// Every server of the project (evald, the viewer, the embedded endpoint)
// ignores a client's offer of brotli: cpp-httplib compresses with brotli at its
// slowest quality, 0.68 s for a 548 KB trajectory page of the viewer against
// 41 ms with gzip and 18 ms as it is (and 26 ms for a 12 KB evaluation
// result). Browsers, libcurl and Python's requests (with brotli installed)
// all offer br first; with it dropped from the request's Accept-Encoding,
// httplib answers with gzip when offered, else uncompressed.
#include <httplib.h>

#include <cctype>
#include <string>
#include <utility>

namespace ptxbench {

// `accept_encoding` without its br entries ("gzip, br;q=1, deflate" -> "gzip, deflate").
inline std::string without_brotli(const std::string& accept_encoding) {
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

// Installs the rewrite as `server`'s pre-routing step, followed by `next`
// (httplib keeps one pre-routing handler: a server's own step goes here).
inline void refuse_brotli(httplib::Server& server, httplib::Server::HandlerWithResponse next = nullptr) {
  server.set_pre_routing_handler([next = std::move(next)](const httplib::Request& req, httplib::Response& res) {
    // httplib hands its handlers its own, non-const request object: rewriting
    // the header here is what its later choice of encoding reads.
    auto& request = const_cast<httplib::Request&>(req);
    auto range = request.headers.equal_range("Accept-Encoding");
    std::string offered;
    for (auto it = range.first; it != range.second; ++it) offered += (offered.empty() ? "" : ", ") + it->second;
    if (!offered.empty()) {
      request.headers.erase(range.first, range.second);
      const std::string kept = without_brotli(offered);
      if (!kept.empty()) request.headers.emplace("Accept-Encoding", kept);
    }
    return next ? next(req, res) : httplib::Server::HandlerResponse::Unhandled;
  });
}

}  // namespace ptxbench
