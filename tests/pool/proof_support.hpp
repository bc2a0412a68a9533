#pragma once
// A candidate's instruction proof without a GPU: an honest wgmma + TMA +
// mbarrier pipeline's listing, static report and executed counts, shared by
// the tests of evaluator/pool/instruction_proof.hpp and hw_cross_check.hpp.
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include "evaluator/pool/instruction_proof.hpp"

namespace ptxbench::test {


inline const task& tma_task() {
  static task t = load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "gemm_bf16_wgmma_tma");
  return t;
}

inline sass_listing listing() {
  sass_listing s;
  s.available = true;
  s.instructions = {{"k", 0x00, "LDG", "LDG.E R2, desc[UR4][R2.64] ;"},
                    {"k", 0x10, "FFMA", "FFMA R4, R2, R3, R4 ;"},
                    {"k", 0x20, "HGMMA", "HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;"},
                    {"k", 0x30, "QGMMA", "QGMMA.64x256x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0 ;"},
                    {"k", 0x40, "SYNCS", "@!P0 SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x8], R3 ;"},
                    {"k", 0x50, "UTMALDG", "UTMALDG.2D [UR8], [UR4] ;"},
                    {"k", 0x60, "UTMASTG", "UTMASTG.2D [UR4], [UR8] ;"}};
  return s;
}

// The static report of a candidate with every target in the PTX and SASS.
inline instruction_report static_report() {
  instruction_report r;
  r.static_passed = true;
  for (auto [ptx, sass, math] : {std::tuple{"wgmma.mma_async", std::vector<std::string>{"HGMMA", "QGMMA", "IGMMA"}, true},
                                 std::tuple{"cp.async.bulk.tensor", std::vector<std::string>{"UTMALDG", "UTMASTG"}, false},
                                 std::tuple{"mbarrier.try_wait", std::vector<std::string>{"SYNCS.PHASECHK"}, false}}) {
    instruction_check c;
    c.ptx = ptx;
    c.ptx_count = 1;
    c.sass_opcodes = sass;
    c.sass_count = 1;
    c.is_math = math;
    c.passed = true;
    r.checks.push_back(c);
  }
  return r;
}

// One launch, 128x256 tiles, A box 64x128 and B box 64x256 (bf16).
inline size_counts facts(int64_t m, int64_t n, int64_t k) {
  size_point s;
  s.values = {{"M", m}, {"N", n}, {"K", k}};
  manifest man = parse_manifest_text(
      R"json({"launches":[{"kernel":"k","grid":["cdiv(N,256)","cdiv(M,128)",1],"block":[384,1,1],"shared_bytes":1024,)json"
      R"json("params":[{"tensor_map":{"tensor":"A","box":[64,128],"swizzle":"128B"}},)json"
      R"json({"tensor_map":{"tensor":"B","box":[64,256],"swizzle":"128B"}},{"buffer":"C"},{"size":"M"},{"size":"N"},{"size":"K"}]}]})json");
  size_counts sc = counted_size_facts(tma_task(), man, s);
  sc.counts.resize(1);
  return sc;
}

// The counts an honest pipelined kernel executes at (m, n, k): HGMMA 64x256x16
// for every FLOP, one A and one B load per 64-wide K step per CTA, eight
// consumer waits per step, a little FFMA in the epilogue.
inline size_counts honest(int64_t m, int64_t n, int64_t k) {
  size_counts sc = facts(m, n, k);
  double per_hgmma = 2.0 * 64 * 256 * 16 / 4;
  uint64_t hgmma = uint64_t(sc.task_flops / per_hgmma);
  uint64_t ctas = uint64_t(sc.launches[0].ctas), steps = ctas * uint64_t(k / 64);
  sc.counts[0] = {{"k", 0x20, hgmma}, {"k", 0x50, 2 * steps}, {"k", 0x40, 8 * steps},
                  {"k", 0x10, uint64_t(0.01 * sc.task_flops / 64)}};
  return sc;
}

inline const instruction_check& check(const instruction_report& r, const std::string& ptx) {
  for (const auto& c : r.checks)
    if (c.ptx == ptx) return c;
  FAIL("no check " << ptx);
  return r.checks.front();
}

}  // namespace ptxbench::test
