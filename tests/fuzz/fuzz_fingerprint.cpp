// The candidate fingerprint the store computes for every turn, before the
// turn is stored: a model's PTX and manifest (the first byte splits the input
// between them). A manifest nested a million levels deep once crashed `run`,
// every resume, merge and replay here.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/store/ptx_fingerprint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t split = rest.empty() ? 0 : (size_t(data[0]) * rest.size()) / 255;
  const std::string ptx = rest.substr(0, split), manifest = rest.substr(split);
  const std::string fp = ptxbench::candidate_fingerprint(ptx.empty() ? "x" : ptx, manifest);
  if (fp.size() != 16) __builtin_trap();
  // Whitespace around the manifest never changes it.
  if (ptxbench::candidate_fingerprint(ptx.empty() ? "x" : ptx, " " + manifest + "\n") != fp) __builtin_trap();
  (void)ptxbench::normalise_ptx(rest);
  return 0;
}
