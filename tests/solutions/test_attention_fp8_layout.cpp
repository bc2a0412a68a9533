// The register-to-operand glue of the fp8 attention forward (tasks/solutions/
// templates/attention_fp8_layout.cuh): P's score accumulators are packed as the
// A fragments of wgmma k32 and the Vᵀ image is written so that, for every
// thread of a quad and every 32-key step, A's k index and the image's k index
// name the same key, and the keys of a tile are each used once.
//
// The two hardware layouts are the PTX ISA's (wgmma register fragments):
//  - accumulator m64nN: s[4j + e] is row g + 8·(e >> 1), column 8j + 2t + (e & 1);
//  - e4m3 A of m64nNk32: register reg byte i is row g + 8·(reg & 1), k 16·(reg >> 1) + 4t + i;
// (g = lane / 4 within the warp's 16 rows, t = lane % 4).
#include <doctest/doctest.h>

#include <set>

#include "tasks/solutions/templates/attention_fp8_layout.cuh"

TEST_CASE("attention fp8 layout: P's registers and the Vt image agree on every key") {
  for (int t = 0; t < 4; ++t)
    for (int kk = 0; kk < 4; ++kk)
      for (int reg = 0; reg < 4; ++reg)
        for (int i = 0; i < 4; ++i) {
          INFO("t " << t << " step " << kk << " register " << reg << " byte " << i);
          const int src = attn::fp8_frag_source(kk, reg, i);
          REQUIRE(src >= 0);
          REQUIRE(src < 64);
          // The accumulator element packed there: its row half and its key.
          const int acc_row_half = (src >> 1) & 1;
          const int acc_key = 8 * (src / 4) + 2 * t + (src & 1);
          // The A fragment position: its row half and k index.
          const int a_row_half = reg & 1;
          const int k = 32 * kk + 16 * (reg >> 1) + 4 * t + i;
          CHECK(acc_row_half == a_row_half);
          // The image row holds, at k, the key the accumulator came from.
          CHECK(attn::vt_key(k / 16, k % 16) == acc_key);
        }
}

TEST_CASE("attention fp8 layout: the Vt image is a permutation of the tile's keys and bytes") {
  std::set<int> keys;
  for (int k = 0; k < 128; ++k) keys.insert(attn::vt_key(k / 16, k % 16));
  CHECK(keys.size() == 128);
  CHECK(*keys.begin() == 0);
  CHECK(*keys.rbegin() == 127);
  std::set<size_t> offsets;
  for (int d = 0; d < 128; ++d)
    for (int c = 0; c < 8; ++c) {
      const size_t off = attn::vt_offset(d, c);
      CHECK(off / 128 == size_t(d));  // chunks stay in their row
      offsets.insert(off);
    }
  CHECK(offsets.size() == 128 * 8);
}
