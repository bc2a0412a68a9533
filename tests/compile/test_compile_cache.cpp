// The compile cache behind compile_ptx(ptx, arch): a repeated compile is a
// hit with the same cubin and report; anything that changes the compile is a
// miss; results another compile might not reproduce are never kept.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "evaluator/compile/compile.hpp"
#include "fixtures.hpp"
#include "skip.hpp"
#include "temp_path.hpp"

using namespace ptxbench;
using ptxbench::test::read_ptx_fixture;

namespace {

// Sets an environment variable for one scope.
struct scoped_env {
  std::string name;
  scoped_env(std::string n, const std::string& value) : name(std::move(n)) { setenv(name.c_str(), value.c_str(), 1); }
  ~scoped_env() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("the same PTX for the same architecture is compiled once") {
  compile_cache_clear();
  const std::string ptx = read_ptx_fixture("trivial_sm90a.ptx");
  const compiled_module first = compile_ptx(ptx, "sm_90a");
  REQUIRE(first.ok);
  CHECK_FALSE(first.report.cache_hit);
  const compiled_module again = compile_ptx(ptx, "sm_90a");
  REQUIRE(again.ok);
  CHECK(again.report.cache_hit);
  CHECK(again.cubin == first.cubin);
  CHECK(again.report.log == first.report.log);
  CHECK(again.report.kernels.size() == first.report.kernels.size());
  CHECK(again.time_ms < first.time_ms);
  auto s = compile_cache_statistics();
  CHECK(s.hits == 1);
  CHECK(s.misses == 1);
  CHECK(s.entries == 1);
  // Another architecture, or one character more, is another compile.
  const compiled_module other_arch = compile_ptx(ptx, "sm_100a");
  CHECK_FALSE(other_arch.report.cache_hit);
  CHECK_FALSE(compile_ptx(ptx + "\n", "sm_90a").report.cache_hit);
  // (the sm_90a module refused for sm_100a is a whole-module refusal: not kept)
  CHECK(compile_cache_statistics().entries == (other_arch.ok ? 3u : 2u));
}

TEST_CASE("a compile error on a line of the PTX is kept and a killed compile is not") {
  compile_cache_clear();
  std::string broken = read_ptx_fixture("trivial_sm90a.ptx");
  broken += "\n.visible .entry broken_k() { add.s32 %r1, %r2; ret; }\n";
  const compiled_module bad = compile_ptx(broken, "sm_90a");
  REQUIRE_FALSE(bad.ok);
  const compiled_module bad_again = compile_ptx(broken, "sm_90a");
  CHECK(bad_again.report.cache_hit);
  CHECK_FALSE(bad_again.ok);
  CHECK(bad_again.report.diagnostics.size() == bad.report.diagnostics.size());

  // The kill needs the ptxas stand-in below.
  if (ptxbench::test::tool_missing("ptxas", ptxas_path(), "a killed compile not being cached")) return;
  const std::string fake = (ptxbench::test::unique_temp_path("ptxbench-cache-slow-ptxas.sh")).string();
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\nexec sleep 30\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  {
    scoped_env ptxas("PTXBENCH_PTXAS", fake);
    scoped_env limit("PTXBENCH_COMPILE_TIME_LIMIT_S", "0.3");
    const std::string ptx = read_ptx_fixture("trivial_sm90a.ptx") + "// killed\n";
    CHECK_FALSE(compile_ptx(ptx, "sm_90a").ok);
    const compiled_module retried = compile_ptx(ptx, "sm_90a");
    CHECK_FALSE(retried.report.cache_hit);
  }
  std::filesystem::remove(fake);
  // The real compiler is another identity: the stand-in's results are not reused.
  CHECK_FALSE(compile_ptx(read_ptx_fixture("trivial_sm90a.ptx") + "// killed\n", "sm_90a").report.cache_hit);
}

TEST_CASE("the cache is bounded and can be switched off") {
  compile_cache_clear();
  const std::string ptx = read_ptx_fixture("trivial_sm90a.ptx");
  {
    scoped_env off("PTXBENCH_COMPILE_CACHE_MB", "0");
    CHECK(compile_cache_capacity() == 0);
    compile_ptx(ptx, "sm_90a");
    CHECK_FALSE(compile_ptx(ptx, "sm_90a").report.cache_hit);
    CHECK(compile_cache_statistics().entries == 0);
  }
  {
    // Room for about one module: the older one is evicted.
    const compiled_module one = compile_ptx(ptx, "sm_90a");
    const double mb = double(ptx.size() + one.cubin.size() + one.report.log.size() + 1024 + 200) / (1 << 20);
    scoped_env small("PTXBENCH_COMPILE_CACHE_MB", std::to_string(mb * 1.5));
    compile_cache_clear();
    compile_ptx(ptx, "sm_90a");
    compile_ptx(ptx + "// b\n", "sm_90a");
    auto s = compile_cache_statistics();
    CHECK(s.entries == 1);
    CHECK(s.evictions == 1);
    CHECK(compile_ptx(ptx + "// b\n", "sm_90a").report.cache_hit);
    CHECK_FALSE(compile_ptx(ptx, "sm_90a").report.cache_hit);
  }
  {
    scoped_env bad("PTXBENCH_COMPILE_CACHE_MB", "lots");
    CHECK(compile_cache_capacity() == size_t(256) << 20);
  }
}

TEST_CASE("a cubin seen before is not disassembled again") {
  if (ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), "the disassembly cache")) return;
  disassembly_cache_clear();
  const compiled_module m = compile_ptx(read_ptx_fixture("wgmma_sm90a.ptx"), "sm_90a");
  REQUIRE(m.ok);
  const sass_listing first = disassemble(m.cubin);
  REQUIRE(first.available);
  CHECK(disassembly_cache_hits() == 0);
  const sass_listing again = disassemble(m.cubin);
  CHECK(disassembly_cache_hits() == 1);
  REQUIRE(again.instructions.size() == first.instructions.size());
  for (size_t i = 0; i < first.instructions.size(); ++i) CHECK(again.instructions[i].text == first.instructions[i].text);
  CHECK(again.opcode_counts == first.opcode_counts);
  // One byte different is another cubin.
  std::vector<char> other = m.cubin;
  other.back() = char(other.back() ^ 1);
  disassemble(other);
  CHECK(disassembly_cache_hits() == 1);
  {
    scoped_env off("PTXBENCH_COMPILE_CACHE_MB", "0");
    disassemble(m.cubin);
    CHECK(disassembly_cache_hits() == 1);
  }
}
