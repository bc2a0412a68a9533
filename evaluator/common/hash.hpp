#pragma once
// 64-bit FNV-1a: a hash that is the same on every machine and standard library
// (std::hash is not), for fingerprints stored in databases, deterministic
// selections and the mutation teacher's choices.
#include <cstdint>
#include <string_view>

namespace ptxbench {

inline constexpr uint64_t k_fnv1a_offset = 1469598103934665603ull;

// FNV-1a of `text`, continuing from `h` (chain calls to hash several parts).
inline uint64_t fnv1a(std::string_view text, uint64_t h = k_fnv1a_offset) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace ptxbench
