// disassemble() and the readers of nvdisasm output: the opcodes the PTX
// fixtures lower to, and instruction offsets as CUPTI reports PCs.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/sass_parse.hpp"
#include "fixtures.hpp"
#include "skip.hpp"
#include "temp_path.hpp"

using namespace ptxbench;
using ptxbench::test::read_ptx_fixture;

namespace {

// The listing of a fixture, or nullopt (a reported skip) where no nvdisasm exists.
std::optional<sass_listing> listing_of(const std::string& fixture, const std::string& arch) {
  const compiled_module m = compile_ptx(read_ptx_fixture(fixture), arch);
  REQUIRE(m.ok);
  sass_listing listing = disassemble(m.cubin);
  if (!listing.available && ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), "the SASS of " + fixture))
    return std::nullopt;
  REQUIRE_MESSAGE(listing.available, listing.error);
  return listing;
}

int count_matching(const sass_listing& l, const std::string& table_opcode) {
  int n = 0;
  for (const sass_instruction& inst : l.instructions) n += sass_opcode_matches(inst, table_opcode) ? 1 : 0;
  return n;
}

// nvdisasm run directly on `cubin` with `options`; its stdout.
std::string run_nvdisasm(const std::string& nvdisasm, const std::string& options, const std::vector<char>& cubin) {
  const std::filesystem::path file = ptxbench::test::unique_temp_path("ptxbench-test-direct.cubin");
  std::ofstream(file, std::ios::binary).write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  std::string out;
  FILE* pipe = ::popen(("'" + nvdisasm + "' " + options + " '" + file.string() + "'").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  ::pclose(pipe);
  std::filesystem::remove(file);
  return out;
}

// An nvdisasm wrapper script around the real one: `body` runs first with the
// arguments in "$@" (it may exit), then the real nvdisasm does. Every call's
// arguments are appended to `log`.
std::filesystem::path nvdisasm_wrapper(const std::string& name, const std::string& body,
                                       const std::filesystem::path& log) {
  const std::filesystem::path wrapper = ptxbench::test::unique_temp_path(name);
  std::ofstream(wrapper) << "#!/bin/sh\necho \"$*\" >> '" << log.string() << "'\n"
                         << body << "\nexec '" << nvdisasm_path() << "' \"$@\"\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  return wrapper;
}

std::vector<std::string> lines_of(const std::filesystem::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// disassemble() through `wrapper`, on a cubin it has not seen (the listing
// cache is cleared first).
sass_listing disassemble_with(const std::filesystem::path& wrapper, const std::vector<char>& cubin) {
  disassembly_cache_clear();
  ::setenv("PTXBENCH_NVDISASM", wrapper.c_str(), 1);
  sass_listing l = disassemble(cubin);
  ::unsetenv("PTXBENCH_NVDISASM");
  disassembly_cache_clear();
  return l;
}

}  // namespace

TEST_CASE("wgmma lowers to HGMMA and QGMMA with their shapes in the opcode") {
  auto l = listing_of("wgmma_sm90a.ptx", "sm_90a");
  if (!l) return;
  CHECK(l->source == "nvdisasm -c -ndf");
  CHECK(l->opcode_counts["HGMMA"] >= 2);
  CHECK(l->opcode_counts["QGMMA"] == 1);
  if (ptxbench::test::default_compile_keeps_setmaxnreg()) CHECK(l->opcode_counts["USETMAXREG"] == 1);
  CHECK(count_matching(*l, "HGMMA.64x128x16.F32.BF16") == 2);
  for (const sass_instruction& inst : l->instructions) CHECK(inst.function == "wgmma_tile");
}

TEST_CASE("mma.sync - ldmatrix - stmatrix and cp.async lower to HMMA - LDSM - STSM and LDGSTS") {
  auto l = listing_of("mma_sync_sm90a.ptx", "sm_90a");
  if (!l) return;
  CHECK(l->opcode_counts["HMMA"] > 0);
  CHECK(count_matching(*l, "HMMA.16816.F32.BF16") == l->opcode_counts["HMMA"]);
  CHECK(l->opcode_counts["LDSM"] > 0);
  CHECK(l->opcode_counts["STSM"] == 1);
  CHECK(l->opcode_counts["LDGSTS"] > 0);
}

TEST_CASE("TMA and mbarrier lower to UTMALDG - UTMASTG and SYNCS.*") {
  auto l = listing_of("tma_mbarrier_sm90a.ptx", "sm_90a");
  if (!l) return;
  CHECK(count_matching(*l, "UTMALDG") == 1);
  CHECK(count_matching(*l, "UTMASTG") == 1);
  CHECK(count_matching(*l, "SYNCS.PHASECHK") >= 1);
  CHECK(count_matching(*l, "SYNCS.EXCH") == 1);
  CHECK(count_matching(*l, "SYNCS.ARRIVE") == 1);
  CHECK(count_matching(*l, "SYNCS.ARRIVE.TRANS") == 0);  // prefixes end at a '.', not mid-word
}

TEST_CASE("tcgen05 on sm_100a lowers to UTCHMMA - UTCQMMA - UTCBAR and LDTM") {
  auto l = listing_of("tcgen05_sm100a.ptx", "sm_100a");
  if (!l) return;
  CHECK(l->opcode_counts["UTCHMMA"] == 1);
  CHECK(l->opcode_counts["UTCQMMA"] == 1);
  CHECK(l->opcode_counts["UTCBAR"] == 1);
  CHECK(l->opcode_counts["LDTM"] == 1);
  CHECK(count_matching(*l, "UTCATOMSWS.FIND_AND_SET") >= 1);
  CHECK(count_matching(*l, "UTMALDG") == 1);
}

TEST_CASE("the text listing without dataflow gives the instructions of --emit-json for every fixture") {
  const std::string nvdisasm = nvdisasm_path();
  if (ptxbench::test::tool_missing("nvdisasm", nvdisasm, "the text listing against --emit-json")) return;
  for (const auto& [fixture, arch] : std::vector<std::pair<std::string, std::string>>{
           {"tma_mbarrier_sm90a.ptx", "sm_90a"}, {"wgmma_sm90a.ptx", "sm_90a"}, {"mma_sync_sm90a.ptx", "sm_90a"},
           {"entries_mixed.ptx", "sm_90a"}, {"trivial_sm90a.ptx", "sm_90a"}, {"tcgen05_sm100a.ptx", "sm_100a"}}) {
    CAPTURE(fixture);
    const compiled_module m = compile_ptx(read_ptx_fixture(fixture), arch);
    REQUIRE(m.ok);
    const sass_listing listing = disassemble(m.cubin);
    REQUIRE_MESSAGE(listing.available, listing.error);
    CHECK(listing.source == "nvdisasm -c -ndf");
    const auto json = parse_nvdisasm_json(run_nvdisasm(nvdisasm, "--emit-json", m.cubin));
    REQUIRE(json.has_value());
    REQUIRE(json->size() == listing.instructions.size());
    REQUIRE(json->size() > 3);
    std::map<std::string, int> json_counts;
    for (size_t i = 0; i < json->size(); ++i) {
      CAPTURE(i);
      const sass_instruction& a = listing.instructions[i];
      const sass_instruction& b = (*json)[i];
      ++json_counts[b.opcode];
      CHECK(a.function == b.function);
      CHECK(a.offset == b.offset);
      CHECK(a.opcode == b.opcode);
      // Branch targets differ by form: "`(.L_x_0)" in text, "0x1bf0" in JSON.
      if (a.text.find('`') == std::string::npos) CHECK(a.text == b.text);
    }
    CHECK(listing.opcode_counts == json_counts);
  }
}

TEST_CASE("the JSON reader takes predicates and operands and refuses a shape it does not know") {
  const std::string doc = R"([{"SM": {"version": {"major": 9, "minor": 0}}},
    [{"function-name": "k", "start": 0, "length": 48, "sass-instructions": [
      {"opcode": "LDC", "operands": "R1,c[0x0][0x28]"},
      {"predicate": "@!P0", "opcode": "BRA", "operands": "0x60", "other-attributes": {"control-flow": "True"}},
      {"opcode": "EXIT"}]}]])";
  const auto parsed = parse_nvdisasm_json(doc);
  REQUIRE(parsed.has_value());
  REQUIRE(parsed->size() == 3);
  CHECK((*parsed)[1].offset == 16);
  CHECK((*parsed)[1].opcode == "BRA");
  CHECK((*parsed)[1].text == "@!P0 BRA 0x60");
  CHECK((*parsed)[0].text == "LDC R1, c[0x0][0x28]");
  CHECK((*parsed)[2].text == "EXIT");
  CHECK_FALSE(parse_nvdisasm_json("not json").has_value());
  CHECK_FALSE(parse_nvdisasm_json(R"([{"a": 1}, []])").has_value());
  // A "length" that is not 16 bytes per listed instruction: offsets cannot be trusted.
  CHECK_FALSE(
      parse_nvdisasm_json(R"([{}, [{"function-name": "k", "length": 64, "sass-instructions": [{"opcode": "EXIT"}]}]])")
          .has_value());
}

// nvdisasm 13.0 lists a device subroutine inside a kernel's section as a
// function of its own whose span lies inside the kernel's "length" (seen on the
// H200 for attention forward's __cuda_sm20_rcp_rn_f32_slowpath); 13.5 lists the
// whole section under the kernel. Both must read as the text listing does: the
// section's kernel, offsets from the section's start.
TEST_CASE("the JSON reader puts a subroutine listed inside a kernel's span under that kernel") {
  const std::string doc = R"([{"SM": {"version": {"major": 9, "minor": 0}}},
    [{"function-name": "attn", "start": 0, "length": 64, "sass-instructions": [
       {"opcode": "LDC", "operands": "R1,c[0x0][0x28]"}, {"opcode": "CALL.REL.NOINC", "operands": "0x20"},
       {"opcode": "EXIT"}]},
     {"function-name": "$__internal_0_$__cuda_sm20_rcp_rn_f32_slowpath", "start": 48, "length": 16,
      "sass-instructions": [{"opcode": "RET.REL.NODEC", "operands": "R2,0x0"}]},
     {"function-name": "gemm", "start": 0, "length": 32, "sass-instructions": [
       {"opcode": "HGMMA.64x128x16.F32.BF16", "operands": "R24,gdesc[UR4],R24"}, {"opcode": "EXIT"}]}]])";
  const auto parsed = parse_nvdisasm_json(doc);
  REQUIRE(parsed.has_value());
  REQUIRE(parsed->size() == 6);
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK((*parsed)[i].function == "attn");
    CHECK((*parsed)[i].offset == 16 * i);
  }
  CHECK((*parsed)[3].opcode == "RET");
  CHECK((*parsed)[4].function == "gemm");
  CHECK((*parsed)[4].offset == 0);
  CHECK((*parsed)[5].offset == 16);
  // A kernel's span that its own instructions and the subroutines inside it do
  // not fill exactly: offsets cannot be trusted.
  CHECK_FALSE(parse_nvdisasm_json(R"([{}, [{"function-name": "k", "start": 0, "length": 64, "sass-instructions": [
       {"opcode": "LDC"}, {"opcode": "EXIT"}]},
     {"function-name": "sub", "start": 48, "length": 16, "sass-instructions": [{"opcode": "RET"}]}]])")
                  .has_value());
  CHECK_FALSE(parse_nvdisasm_json(R"([{}, [{"function-name": "k", "start": 0, "length": 32, "sass-instructions": [
       {"opcode": "LDC"}]},
     {"function-name": "sub", "start": 16, "length": 32, "sass-instructions": [{"opcode": "RET"}, {"opcode": "NOP"}]}]])")
                  .has_value());
}

TEST_CASE("the text reader attributes instructions to their section and strips predicates") {
  const std::string text =
      "\t.section\t.text.k1,\"ax\",@progbits\n"
      "k1:\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
      "        /*0010*/               @P0 BRA `(.L_x_0) ;\n"
      "$k1$helper:\n"
      "        /*0020*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;\n"
      "\t.section\t.text.k2,\"ax\",@progbits\n"
      "        /*0000*/                   EXIT ;\n";
  const std::vector<sass_instruction> insts = parse_nvdisasm_text(text);
  REQUIRE(insts.size() == 4);
  CHECK(insts[1].function == "k1");
  CHECK(insts[1].offset == 0x10);
  CHECK(insts[1].opcode == "BRA");
  CHECK(insts[1].text == "@P0 BRA `(.L_x_0)");
  CHECK(insts[2].function == "k1");
  CHECK(insts[2].opcode == "HGMMA");
  CHECK(insts[3].function == "k2");
  CHECK(insts[3].offset == 0);
}

TEST_CASE("an empty cubin is an unavailable listing with a reason - not an exception") {
  const sass_listing l = disassemble({});
  CHECK_FALSE(l.available);
  CHECK_FALSE(l.error.empty());
}

TEST_CASE("a new cubin costs one nvdisasm run - the text listing without dataflow analysis") {
  if (ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), "the count of nvdisasm runs")) return;
  const compiled_module m = compile_ptx(read_ptx_fixture("wgmma_sm90a.ptx"), "sm_90a");
  REQUIRE(m.ok);
  const std::filesystem::path log = ptxbench::test::unique_temp_path("ptxbench-test-nvdisasm-calls.log");
  std::filesystem::remove(log);
  const auto wrapper = nvdisasm_wrapper("ptxbench-test-logging-nvdisasm.sh", "", log);
  const sass_listing l = disassemble_with(wrapper, m.cubin);
  const std::vector<std::string> calls = lines_of(log);
  std::filesystem::remove(wrapper);
  std::filesystem::remove(log);
  REQUIRE(l.available);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].rfind("-c -ndf ", 0) == 0);
  CHECK(l.source == "nvdisasm -c -ndf");
}

TEST_CASE("an nvdisasm that refuses -ndf or --emit-json falls back to the next listing - same instructions") {
  if (ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), "the listing fallbacks")) return;
  const compiled_module m = compile_ptx(read_ptx_fixture("mma_sync_sm90a.ptx"), "sm_90a");
  REQUIRE(m.ok);
  disassembly_cache_clear();
  const sass_listing fast = disassemble(m.cubin);
  REQUIRE(fast.available);
  const std::filesystem::path log = ptxbench::test::unique_temp_path("ptxbench-test-nvdisasm-fallback.log");
  const auto refuse = [](const std::string& option) {
    return "for a in \"$@\"; do if [ \"$a\" = \"" + option +
           "\" ]; then echo \"nvdisasm fatal : Unknown option '" + option + "'\" >&2; exit 1; fi; done";
  };
  struct fallback_case {
    std::string what, body, source;
    size_t calls;
  };
  for (const fallback_case& c : std::vector<fallback_case>{
           {"no -ndf", refuse("-ndf"), "nvdisasm --emit-json", 2},
           {"neither -ndf nor --emit-json", refuse("-ndf") + "\n" + refuse("--emit-json"), "nvdisasm -c", 3},
           // A text listing with a line lost (a gap in the offsets) is not trusted.
           {"a garbled text listing",
            "case \"$*\" in *-ndf*) '" + nvdisasm_path() + "' \"$@\" | sed '/\\/\\*0040\\*\\//d'; exit 0;; esac",
            "nvdisasm --emit-json", 2}}) {
    CAPTURE(c.what);
    std::filesystem::remove(log);
    const auto wrapper = nvdisasm_wrapper("ptxbench-test-fallback-nvdisasm.sh", c.body, log);
    const sass_listing l = disassemble_with(wrapper, m.cubin);
    const size_t calls = lines_of(log).size();
    std::filesystem::remove(wrapper);
    REQUIRE_MESSAGE(l.available, l.error);
    CHECK(l.source == c.source);
    CHECK(calls == c.calls);
    CHECK(l.opcode_counts == fast.opcode_counts);
    REQUIRE(l.instructions.size() == fast.instructions.size());
    for (size_t i = 0; i < l.instructions.size(); ++i) {
      CHECK(l.instructions[i].function == fast.instructions[i].function);
      CHECK(l.instructions[i].offset == fast.instructions[i].offset);
      CHECK(l.instructions[i].opcode == fast.instructions[i].opcode);
    }
  }
  std::filesystem::remove(log);

  ::setenv("PTXBENCH_NVDISASM", "/nonexistent/nvdisasm", 1);
  const sass_listing missing = disassemble(m.cubin);
  ::unsetenv("PTXBENCH_NVDISASM");
  CHECK_FALSE(missing.available);
  CHECK(missing.error.find("nvdisasm not found") != std::string::npos);
}

TEST_CASE("the checked text reader refuses a listing with a gap - a repeat - a section seen twice or nothing") {
  const std::string head = "\t.section\t.text.k1,\"ax\",@progbits\n";
  const auto line = [](const char* offset, const char* body) {
    return std::string("        /*") + offset + "*/                   " + body + " ;\n";
  };
  const std::string whole = head + line("0000", "LDC R1, c[0x0][0x28]") + line("0010", "EXIT") +
                            "\t.section\t.text.k2,\"ax\",@progbits\n" + line("0000", "EXIT");
  const auto ok = parse_nvdisasm_text_checked(whole);
  REQUIRE(ok.has_value());
  CHECK(ok->size() == 3);
  CHECK_FALSE(parse_nvdisasm_text_checked(head + line("0000", "LDC R1, c[0x0][0x28]") + line("0020", "EXIT")));
  CHECK_FALSE(parse_nvdisasm_text_checked(head + line("0000", "NOP") + line("0000", "EXIT")));
  CHECK_FALSE(parse_nvdisasm_text_checked(head + line("0010", "EXIT")));
  CHECK_FALSE(parse_nvdisasm_text_checked(whole + head + line("0000", "EXIT")));
  CHECK_FALSE(parse_nvdisasm_text_checked(""));
  CHECK_FALSE(parse_nvdisasm_text_checked(head));
}
