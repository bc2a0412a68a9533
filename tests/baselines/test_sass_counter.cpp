#include <doctest/doctest.h>

#include <stdexcept>

#include "evaluator/profile/sass_counter.hpp"
#include "tests/baselines/loop_kernel.hpp"
#include "tests/baselines/require_gpu.hpp"

namespace ptxbench::gpu_test {
namespace {

constexpr unsigned blocks = 4, threads = 64;
constexpr uint64_t warps = blocks * threads / 32;

TEST_CASE("CUPTI counts every SASS instruction of a known loop exactly (module loaded inside the pass)") {
  gpu& g = require_gpu();
  const std::vector<char> cubin = link_loop_kernel();
  device_memory out(blocks * threads * 4);
  const uint32_t n = 1000;
  loaded_loop_kernel k;
  const sass_count_result r = count_executed_sass(g.context, [&] {
    k = load_loop_kernel(cubin);
    launch_loop_kernel(k, g.stream, out.ptr(), n, blocks, threads);
    check(cuStreamSynchronize(g.stream), "cuStreamSynchronize");
  });
  REQUIRE_MESSAGE(r.ok, r.error);
  const loop_count_classes c = classify_loop_counts(r, warps, warps * n);
  INFO(c.summary());
  CHECK(c.exact());
  cuModuleUnload(k.module);
}

// Only the first instrumented pass of a process records (CUPTI 13.0, H200):
// later passes must come back as errors, never as counts.
void check_later_pass(const sass_count_result& r) {
  if (!r.ok) {
    CHECK(r.counts.empty());
    CHECK(r.error.find("recorded no instructions") != std::string::npos);
    MESSAGE("a later pass in this process recorded nothing, as documented: " << r.error);
  }
}

TEST_CASE("CUPTI sums the launches inside one pass") {
  gpu& g = require_gpu();
  const std::vector<char> cubin = link_loop_kernel();
  device_memory out(blocks * threads * 4);
  loaded_loop_kernel k;
  const sass_count_result r = count_executed_sass(g.context, [&] {
    k = load_loop_kernel(cubin);
    launch_loop_kernel(k, g.stream, out.ptr(), 100, blocks, threads);
    launch_loop_kernel(k, g.stream, out.ptr(), 300, blocks, threads);
    check(cuStreamSynchronize(g.stream), "cuStreamSynchronize");
  });
  check_later_pass(r);
  if (!r.ok) return;
  const loop_count_classes c = classify_loop_counts(r, 2 * warps, warps * 400);
  INFO(c.summary());
  CHECK(c.exact());
  cuModuleUnload(k.module);
}

TEST_CASE("a kernel whose module was loaded before the pass is reported uncounted - never as zero counts") {
  gpu& g = require_gpu();
  const loaded_loop_kernel k = load_loop_kernel(link_loop_kernel());
  device_memory out(blocks * threads * 4);
  const sass_count_result r = count_executed_sass(g.context, [&] {
    launch_loop_kernel(k, g.stream, out.ptr(), 100, blocks, threads);
    check(cuStreamSynchronize(g.stream), "cuStreamSynchronize");
  });
  CHECK_FALSE(r.ok);
  CHECK(r.counts.empty());
  CHECK(r.error.find("loaded before") != std::string::npos);
  cuModuleUnload(k.module);
}

TEST_CASE("consecutive passes - each loading its own module - never count another pass's launches") {
  gpu& g = require_gpu();
  const std::vector<char> cubin = link_loop_kernel();
  device_memory out(blocks * threads * 4);
  for (uint32_t n : {50u, 70u, 50u}) {
    loaded_loop_kernel k;
    const sass_count_result r = count_executed_sass(g.context, [&] {
      k = load_loop_kernel(cubin);
      launch_loop_kernel(k, g.stream, out.ptr(), n, blocks, threads);
      check(cuStreamSynchronize(g.stream), "cuStreamSynchronize");
    });
    check_later_pass(r);
    if (!r.ok) {
      cuModuleUnload(k.module);
      continue;
    }
    const loop_count_classes c = classify_loop_counts(r, warps, warps * n);
    INFO("n=" << n << ": " << c.summary());
    CHECK(c.exact());
    CHECK(c.zero_pcs >= 5);  // the stores behind the branch never taken are listed with count 0
    cuModuleUnload(k.module);
  }
}

TEST_CASE("a failing instrumented pass is reported as an error - never as counts") {
  gpu& g = require_gpu();
  const sass_count_result r = count_executed_sass(g.context, [] { throw std::runtime_error("launch refused"); });
  CHECK_FALSE(r.ok);
  CHECK(r.counts.empty());
  CHECK(r.error.find("launch refused") != std::string::npos);
}

TEST_CASE("an instrumented pass that launches nothing is not a success") {
  gpu& g = require_gpu();
  const sass_count_result r = count_executed_sass(g.context, [] {});
  CHECK_FALSE(r.ok);
  CHECK(r.counts.empty());
}

}  // namespace
}  // namespace ptxbench::gpu_test
