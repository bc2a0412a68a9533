#pragma once
// The JSON content type of every server of the project (evald, the viewer,
// the embedded endpoint). cpp-httplib compresses a body whose type is exactly
// "application/json" whenever the client accepts it, with brotli at its
// slowest quality when the client offers br (libcurl, browsers and Python's
// requests with brotli installed do): a 12 KB evaluation result cost 26 ms of
// brotli per answer, which took evald's added latency to 34 ms on the GPU
// machine (docs/scale.md). With the charset named the type is the same to
// every client and the answers go out as they are.
namespace ptxbench {
inline constexpr const char* k_json_content_type = "application/json; charset=utf-8";
}  // namespace ptxbench
