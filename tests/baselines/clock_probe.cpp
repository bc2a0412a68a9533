// How much CUPTI's SASS counting slows code of different shapes, as a kernel
// sees it through %clock64: the measurement behind the counting-detection
// fixtures (tests/fixtures/adversarial/clock_detect, trap_when_counted).
//
//   ptxbench_clock_probe plain     one launch, not instrumented
//   ptxbench_clock_probe counted   one launch inside count_executed_sass
//   ptxbench_clock_probe ptx       prints the probe's PTX
//
// (one instrumented launch per process: see sass_counter.hpp). Thread 0 of
// each of 132 CTAs of 128 threads times every shape twice, one after the
// other; the other warps wait at a barrier, as in the fixtures. Prints, per
// shape and call, the CTAs' minimum, median and maximum cycles.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "evaluator/common/text.hpp"
#include "evaluator/profile/sass_counter.hpp"
#include "tests/baselines/gpu_support.hpp"
#include "tests/baselines/loop_kernel.hpp"

namespace {

using namespace ptxbench;
using namespace ptxbench::gpu_test;

// Shapes: each is a PTX block that reads x (u32) and leaves it changed.
struct shape {
  const char* name;
  std::string body;
};

std::vector<shape> shapes() {
  std::vector<shape> s;
  s.push_back({"loop 512 x (mad add setp bra)",
               "mov.u32 i, 0;\nL0_%:\n.pragma \"nounroll\";\nmad.lo.u32 x, x, 3, 1;\nadd.u32 i, i, 1;\nsetp.lt.u32 p, i, 512;\n@p bra L0_%;\n"});
  std::string straight;
  for (int k = 0; k < 512; ++k) straight += "mad.lo.u32 x, x, 3, 1;\n";
  s.push_back({"straight 512 mad", straight});
  s.push_back({"loop 4096 x (mad add setp bra)",
               "mov.u32 i, 0;\nL2_%:\n.pragma \"nounroll\";\nmad.lo.u32 x, x, 3, 1;\nadd.u32 i, i, 1;\nsetp.lt.u32 p, i, 4096;\n@p bra L2_%;\n"});
  std::string unrolled = "mov.u32 i, 0;\nL3_%:\n.pragma \"nounroll\";\n";
  for (int k = 0; k < 64; ++k) unrolled += "mad.lo.u32 x, x, 3, 1;\n";
  unrolled += "add.u32 i, i, 1;\nsetp.lt.u32 p, i, 64;\n@p bra L3_%;\n";
  s.push_back({"loop 64 x (64 mad)", unrolled});
  // A data-dependent two-way branch inside each iteration: four blocks per iteration.
  s.push_back({"loop 512 x diamond",
               "mov.u32 i, 0;\nL4_%:\n.pragma \"nounroll\";\nand.b32 b, x, 1;\nsetp.eq.u32 q, b, 0;\n@q bra E4_%;\nmad.lo.u32 x, x, 3, 1;\n"
               "bra.uni J4_%;\nE4_%:\nshr.u32 x, x, 1;\nadd.u32 x, x, 7;\nJ4_%:\nadd.u32 i, i, 1;\nsetp.lt.u32 p, i, 512;\n"
               "@p bra L4_%;\n"});
  return s;
}

std::string probe_ptx(const std::vector<shape>& s) {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry clock_probe(.param .u64 out)\n{\n"
                    ".reg .u32 x, i, b, t;\n.reg .pred p, q, lead;\n.reg .u64 c0, c1, d, o, a;\n"
                    ".shared .u32 sink;\n"
                    "ld.param.u64 o, [out];\nmov.u32 t, %tid.x;\nsetp.eq.u32 lead, t, 0;\n@!lead bra DONE;\n"
                    "mov.u32 t, %ctaid.x;\nmul.wide.u32 a, t, " +
                    std::to_string(8 * 2 * s.size()) + ";\nadd.u64 o, o, a;\n";
  int slot = 0;
  for (size_t k = 0; k < s.size(); ++k)
    for (int call = 0; call < 2; ++call) {
      const std::string tag = std::to_string(k) + "_" + std::to_string(call);
      ptx += "mov.u64 c0, %clock64;\ncvt.u32.u64 x, c0;\n" + replace_all(s[k].body, "%", tag) +
             "st.volatile.shared.u32 [sink], x;\nmov.u64 c1, %clock64;\nsub.s64 d, c1, c0;\n"
             "st.global.u64 [o+" + std::to_string(8 * slot++) + "], d;\n";
    }
  ptx += "DONE:\nbar.sync 0;\nret;\n}\n";
  return ptx;
}

}  // namespace

int main(int argc, char** argv) {
  const bool counted = argc > 1 && std::strcmp(argv[1], "counted") == 0;
  if (argc > 1 && std::strcmp(argv[1], "ptx") == 0) {  // the probe's PTX, for ptxas here
    std::fputs(probe_ptx(shapes()).c_str(), stdout);
    return 0;
  }
  gpu& g = the_gpu();
  if (!g.ok) {
    std::printf("no GPU: %s\n", g.why_not.c_str());
    return 77;
  }
  const std::vector<shape> s = shapes();
  const std::vector<char> cubin = link_ptx(probe_ptx(s), "clock_probe.ptx");
  const unsigned ctas = 132;
  const size_t slots = 2 * s.size();
  device_memory out(ctas * slots * 8);
  out.fill_bytes(0);
  auto work = [&] {
    CUmodule module = nullptr;
    CUfunction f = nullptr;
    check(cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
    check(cuModuleGetFunction(&f, module, "clock_probe"), "cuModuleGetFunction");
    CUdeviceptr o = out.ptr();
    void* params[] = {&o};
    check(cuLaunchKernel(f, ctas, 1, 1, 128, 1, 1, 0, g.stream, params, nullptr), "cuLaunchKernel");
    check(cuStreamSynchronize(g.stream), "cuStreamSynchronize");
    check(cuModuleUnload(module), "cuModuleUnload");
  };
  if (counted) {
    const sass_count_result r = count_executed_sass(g.context, work);
    std::printf("counted: ok=%d %s (%zu PC records)\n", r.ok ? 1 : 0, r.error.c_str(), r.counts.size());
  } else {
    work();
    std::printf("plain\n");
  }
  std::vector<uint64_t> cycles(ctas * slots);
  out.download(cycles.data());
  for (size_t k = 0; k < slots; ++k) {
    std::vector<uint64_t> v;
    for (unsigned c = 0; c < ctas; ++c) v.push_back(cycles[c * slots + k]);
    std::sort(v.begin(), v.end());
    std::printf("%-8s %-34s call %zu: min %7llu  median %7llu  max %7llu\n", counted ? "counted" : "plain",
                s[k / 2].name, k % 2 + 1, static_cast<unsigned long long>(v.front()),
                static_cast<unsigned long long>(v[v.size() / 2]), static_cast<unsigned long long>(v.back()));
  }
  return 0;
}
