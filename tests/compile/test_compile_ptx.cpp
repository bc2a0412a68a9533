// compile_ptx through the real compilers (ptxas whole-program and nvJitLink),
// for sm_90a and sm_100a, on a machine that may have no GPU.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "evaluator/compile/compile.hpp"
#include "fixtures.hpp"
#include "skip.hpp"
#include "temp_path.hpp"

using namespace ptxbench;
using ptxbench::test::read_ptx_fixture;

namespace {
const kernel_resources* find_kernel(const compile_report& r, const std::string& name) {
  for (const kernel_resources& k : r.kernels) {
    if (k.kernel == name) return &k;
  }
  return nullptr;
}
// Both compilers, or only nvJitLink where no ptxas executable exists.
std::vector<compiler_backend> backends() {
  if (ptxbench::test::tool_missing("ptxas", ptxas_path(), "the ptxas backend")) return {compiler_backend::nvjitlink};
  return {compiler_backend::ptxas, compiler_backend::nvjitlink};
}
std::string name_of(compiler_backend b) { return b == compiler_backend::ptxas ? "ptxas" : "nvjitlink"; }

bool has_elf_magic(const std::vector<char>& cubin) {
  return cubin.size() > 4 && cubin[0] == 0x7f && cubin[1] == 'E' && cubin[2] == 'L' && cubin[3] == 'F';
}
}  // namespace

TEST_CASE("a trivial kernel compiles to a cubin with its resources") {
  for (compiler_backend backend : backends()) {
    CAPTURE(name_of(backend));
    const compiled_module m = compile_ptx(read_ptx_fixture("trivial_sm90a.ptx"), "sm_90a", backend);
    REQUIRE(m.ok);
    CHECK(has_elf_magic(m.cubin));
    CHECK(m.report.cubin_bytes == m.cubin.size());
    CHECK(m.report.arch == "sm_90a");
    CHECK(m.time_ms > 0.0);
    const kernel_resources* k = find_kernel(m.report, "saxpy");
    REQUIRE(k != nullptr);
    CHECK(k->registers > 0);
    CHECK(k->spill_store_bytes == 0);
    CHECK(m.report.log.find("Used") != std::string::npos);
    CHECK(m.report.log.rfind(std::string("compiler: ") + (backend == compiler_backend::ptxas ? "ptxas" : "nvJitLink"),
                             0) == 0);
  }
}

TEST_CASE("the sm_90a fixtures compile: wgmma - mma.sync + ldmatrix + cp.async - TMA + mbarrier") {
  for (compiler_backend backend : backends()) {
    for (const char* name : {"wgmma_sm90a.ptx", "mma_sync_sm90a.ptx", "tma_mbarrier_sm90a.ptx"}) {
      CAPTURE(name_of(backend));
      CAPTURE(name);
      const compiled_module m = compile_ptx(read_ptx_fixture(name), "sm_90a", backend);
      CHECK(m.ok);
      CHECK(m.report.kernels.size() == 1);
    }
  }
  const compiled_module wgmma = compile_ptx(read_ptx_fixture("wgmma_sm90a.ptx"), "sm_90a");
  REQUIRE(find_kernel(wgmma.report, "wgmma_tile") != nullptr);
  CHECK(find_kernel(wgmma.report, "wgmma_tile")->static_shared_bytes == 24576);
}

TEST_CASE("the tcgen05 kernel compiles for sm_100a without a Blackwell GPU - and not for sm_90a") {
  const std::string ptx = read_ptx_fixture("tcgen05_sm100a.ptx");
  for (compiler_backend backend : backends()) {
    CAPTURE(name_of(backend));
    const compiled_module blackwell = compile_ptx(ptx, "sm_100a", backend);
    CHECK(blackwell.ok);
    CHECK(has_elf_magic(blackwell.cubin));
    const compiled_module hopper = compile_ptx(ptx, "sm_90a", backend);
    CHECK_FALSE(hopper.ok);
    CHECK(hopper.cubin.empty());
    REQUIRE_FALSE(hopper.report.diagnostics.empty());
    CHECK(hopper.report.diagnostics[0].severity == "error");
  }
}

TEST_CASE("a syntax error is reported at its line with the PTX around it quoted") {
  for (compiler_backend backend : backends()) {
    CAPTURE(name_of(backend));
    const compiled_module m = compile_ptx(read_ptx_fixture("syntax_error_sm90a.ptx"), "sm_90a", backend);
    CHECK_FALSE(m.ok);
    CHECK(m.cubin.empty());
    REQUIRE(m.report.diagnostics.size() == 1);
    const ptxas_diagnostic& d = m.report.diagnostics[0];
    CHECK(d.line == 14);
    CHECK(d.severity == "error");
    CHECK(d.message.find("syntax error") != std::string::npos);
    CHECK(d.quoted.find(">   14 |  add.u32  %r2, %r1 4;") != std::string::npos);
    CHECK(d.quoted.find("   12 |") != std::string::npos);
    CHECK(d.quoted.find("   16 |") != std::string::npos);
    CHECK(d.quoted.find("   17 |") == std::string::npos);
    CHECK(m.report.log.find("candidate.ptx, line 14") != std::string::npos);  // no temporary file names
    CHECK(m.evaluator_error.empty());  // the PTX's own failure
  }
}

TEST_CASE("an undeclared register is reported as an unknown symbol on its line") {
  for (compiler_backend backend : backends()) {
    CAPTURE(name_of(backend));
    const compiled_module m = compile_ptx(read_ptx_fixture("undefined_register_sm90a.ptx"), "sm_90a", backend);
    CHECK_FALSE(m.ok);
    bool found = false;
    for (const ptxas_diagnostic& d : m.report.diagnostics) {
      if (d.message.find("Unknown symbol '%r7'") != std::string::npos) {
        found = true;
        CHECK(d.line == 15);
        CHECK(d.quoted.find(">   15 |") != std::string::npos);
        CHECK(d.quoted.find("%r7") != std::string::npos);
      }
    }
    CHECK(found);
  }
}

TEST_CASE("empty PTX and an unknown architecture are failed compiles - not exceptions") {
  const compiled_module empty = compile_ptx("  \n", "sm_90a");
  CHECK_FALSE(empty.ok);
  REQUIRE(empty.report.diagnostics.size() == 1);
  CHECK(empty.report.diagnostics[0].message == "the PTX module is empty");
  for (compiler_backend backend : backends()) {
    CAPTURE(name_of(backend));
    // Well-formed but unknown to the compiler: the compiler's own refusal.
    const compiled_module unknown = compile_ptx(read_ptx_fixture("trivial_sm90a.ptx"), "sm_12345", backend);
    CHECK_FALSE(unknown.ok);
    CHECK_FALSE(unknown.report.diagnostics.empty());
  }
  // Not an architecture name at all: refused before any compiler sees it.
  const compiled_module malformed = compile_ptx(read_ptx_fixture("trivial_sm90a.ptx"), "-o/tmp/x");
  CHECK_FALSE(malformed.ok);
  REQUIRE(malformed.report.diagnostics.size() == 1);
  CHECK(malformed.report.diagnostics[0].message.find("is not a target architecture") != std::string::npos);
}

TEST_CASE("ptxas keeps setmaxnreg - nvJitLink drops it and says so") {
  const std::string ptx = read_ptx_fixture("tma_mbarrier_sm90a.ptx");
  const compiled_module relocatable = compile_ptx(ptx, "sm_90a", compiler_backend::nvjitlink);
  REQUIRE(relocatable.ok);
  bool advised = false;
  for (const ptxas_diagnostic& d : relocatable.report.diagnostics) {
    advised = advised || (d.severity == "info" && d.message.find("'setmaxnreg' ignored") != std::string::npos);
  }
  CHECK(advised);
  if (ptxbench::test::tool_missing("ptxas", ptxas_path(), "setmaxnreg kept by ptxas")) return;
  const compiled_module whole = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
  REQUIRE(whole.ok);
  for (const ptxas_diagnostic& d : whole.report.diagnostics) CHECK(d.message.find("setmaxnreg") == std::string::npos);
  // setmaxnreg.inc to 232 shows as the kernel's register count.
  REQUIRE(whole.report.kernels.size() == 1);
  CHECK(whole.report.kernels[0].registers == 232);
}

TEST_CASE("compiles on several threads at once all succeed") {
  const std::vector<std::string> fixtures = {"trivial_sm90a.ptx", "mma_sync_sm90a.ptx", "tma_mbarrier_sm90a.ptx",
                                             "wgmma_sm90a.ptx"};
  std::vector<std::string> texts;
  for (const std::string& f : fixtures) texts.push_back(read_ptx_fixture(f));
  const bool no_nvdisasm = ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), "disassembly on several threads");
  std::vector<int> ok(8, 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ok.size(); ++i) {
    const compiler_backend backend = i % 2 ? compiler_backend::nvjitlink : compiler_backend::automatic;
    threads.emplace_back([&, i, backend] {
      const compiled_module m = compile_ptx(texts[i % texts.size()], "sm_90a", backend);
      const bool disassembled = no_nvdisasm || !disassemble(m.cubin).instructions.empty();
      ok[i] = m.ok && disassembled ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < ok.size(); ++i) CHECK_MESSAGE(ok[i] == 1, fixtures[i % fixtures.size()]);
}

namespace {
std::string trivial_entries(size_t n) {
  std::string ptx = ".version 8.7\n.target sm_90a\n.address_size 64\n";
  for (size_t i = 0; i < n; ++i) ptx += ".visible .entry k" + std::to_string(i) + "() { ret; }\n";
  return ptx;
}
std::string first_error(const compiled_module& m) {
  for (const ptxas_diagnostic& d : m.report.diagnostics)
    if (d.severity == "error") return d.message;
  return "";
}
}  // namespace

TEST_CASE("a module of too many entries or bytes fails to compile with the limit named") {
  // 50 000 entries kept the compile stage busy without end.
  for (compiler_backend backend : backends()) {
    CAPTURE(name_of(backend));
    const compiled_module many = compile_ptx(trivial_entries(50000), "sm_90a", backend);
    CHECK_FALSE(many.ok);
    CHECK(first_error(many) == "PTX has 50000 entries; the limit is 10000");
    const compiled_module big = compile_ptx(std::string(k_max_ptx_bytes + 1, ' ') + ".entry k() { ret; }", "sm_90a", backend);
    CHECK_FALSE(big.ok);
    CHECK(first_error(big).find("bytes; the limit is 16777216") != std::string::npos);
  }
  CHECK(ptx_bounds_problem(trivial_entries(10000)).empty());
  CHECK(ptx_bounds_problem("// .entry in a comment\n.entry a() {}\n.entry_like b() {}").empty());
}

TEST_CASE("ptxas running past the compile time limit is killed and the compile fails") {
  // A stand-in for a ptxas that never finishes: the limit comes from the environment.
  const std::string fake = (ptxbench::test::unique_temp_path("ptxbench-slow-ptxas.sh")).string();
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\nexec sleep 30\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  setenv("PTXBENCH_PTXAS", fake.c_str(), 1);
  setenv("PTXBENCH_COMPILE_TIME_LIMIT_S", "0.5", 1);
  const auto start = std::chrono::steady_clock::now();
  const compiled_module m = compile_ptx(read_ptx_fixture("trivial_sm90a.ptx"), "sm_90a", compiler_backend::ptxas);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsetenv("PTXBENCH_PTXAS");
  unsetenv("PTXBENCH_COMPILE_TIME_LIMIT_S");
  std::filesystem::remove(fake);
  CHECK_FALSE(m.ok);
  CHECK(first_error(m) == "compile ran past the time limit of 500 ms (ptxas was killed)");
  CHECK(elapsed_s < 5.0);
  CHECK(compile_time_limit_ms() == k_compile_time_limit_s * 1000);
}

namespace {
// A stand-in ptxas: a shell script with `body`, removed with the object.
struct fake_ptxas {
  explicit fake_ptxas(const std::string& body)
      : path((std::filesystem::temp_directory_path() / ("ptxbench-fake-ptxas-" + std::to_string(::getpid()) + ".sh"))
                 .string()) {
    {
      std::ofstream f(path);
      f << "#!/bin/sh\n" << body << "\n";
    }
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    setenv("PTXBENCH_PTXAS", path.c_str(), 1);
  }
  ~fake_ptxas() {
    unsetenv("PTXBENCH_PTXAS");
    std::filesystem::remove(path);
  }
  std::string path;
};
}  // namespace

TEST_CASE("a compile the evaluator could not run is its error - not the PTX's failure") {
  // These were "compile failed: ptxas error: ..." charged to the candidate.
  const std::string ptx = read_ptx_fixture("trivial_sm90a.ptx");
  {
    setenv("PTXBENCH_PTXAS", "/nonexistent/ptxas", 1);
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    unsetenv("PTXBENCH_PTXAS");
    CHECK_FALSE(m.ok);
    CHECK(m.evaluator_error.find("ptxas not found") == 0);
  }
  {
    fake_ptxas fake("exit 0");  // exits 0, writes no cubin
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    CHECK_FALSE(m.ok);
    CHECK(m.evaluator_error == "ptxas exited 0 but produced no cubin");
  }
  {
    fake_ptxas fake("exit 3");
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    CHECK_FALSE(m.ok);
    CHECK(m.evaluator_error == "ptxas failed with exit code 3 and no error message");
  }
  {
    // A crash that does not repeat on the same PTX is the machine's; the second run's answer counts.
    const std::string marker = (std::filesystem::temp_directory_path() / "ptxbench-ptxas-crashed-once").string();
    std::filesystem::remove(marker);
    fake_ptxas fake("if [ -e " + marker + " ]; then exit 3; fi; touch " + marker + "; kill -SEGV $$");
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    std::filesystem::remove(marker);
    CHECK_FALSE(m.ok);
    CHECK(m.evaluator_error == "ptxas failed with exit code 3 and no error message");
  }
  {
    // What ptxas says about the PTX stays the PTX's failure.
    fake_ptxas fake("echo \"ptxas $5, line 3; error   : Unknown symbol 'x'\" >&2; exit 255");
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    CHECK_FALSE(m.ok);
    CHECK(m.evaluator_error.empty());
    CHECK(first_error(m) == "Unknown symbol 'x'");
  }
  {
    // No temporary file (out of descriptors, a full or missing TMPDIR).
    fake_ptxas fake("exit 0");
    const char* tmp = std::getenv("TMPDIR");
    const std::string saved = tmp ? tmp : "";
    setenv("TMPDIR", "/nonexistent/ptxbench-tmp", 1);
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    if (tmp) setenv("TMPDIR", saved.c_str(), 1);
    else unsetenv("TMPDIR");
    CHECK_FALSE(m.ok);
    CHECK(m.evaluator_error == "could not write the PTX to a temporary file");
  }
}

TEST_CASE("nvJitLink's linker errors are the PTX's compile failure - an undefined function named") {
  const std::string ptx =
      ".version 8.0\n.target sm_90a\n.address_size 64\n.extern .func foo();\n"
      ".visible .entry k(.param .u64 p) { call foo; ret; }\n";
  const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::nvjitlink);
  CHECK_FALSE(m.ok);
  CHECK(m.evaluator_error.empty());  // the candidate's failure, not an evaluator error
  bool named = false;
  for (const ptxas_diagnostic& d : m.report.diagnostics)
    named = named || (d.severity == "error" && d.message.find("Undefined reference to 'foo'") != std::string::npos);
  CHECK(named);
  if (!ptxbench::test::tool_missing("ptxas", ptxas_path(), "ptxas on an undefined function")) {
    const compiled_module by_ptxas = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    CHECK_FALSE(by_ptxas.ok);
    CHECK(by_ptxas.evaluator_error.empty());
  }
}

TEST_CASE("a ptxas that crashes on the same PTX twice is that PTX's compile failure - not an evaluator error") {
  // Before: "ptxas crashed (signal 11)" was an evaluator error, so a module that
  // crashes the compiler escaped its verdict and the pass rates.
  fake_ptxas fake("kill -SEGV $$");
  const compiled_module m = compile_ptx(read_ptx_fixture("trivial_sm90a.ptx"), "sm_90a", compiler_backend::ptxas);
  CHECK_FALSE(m.ok);
  CHECK(m.evaluator_error.empty());
  CHECK(first_error(m) ==
        "ptxas crashed (signal 11) on this PTX, twice: a module that crashes the compiler is not accepted");
}
