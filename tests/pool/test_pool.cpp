// Protocol framing and the dynamic half of the instructions stage, without a GPU.
#include <doctest/doctest.h>

#include <unistd.h>

#include "evaluator/pool/instruction_proof.hpp"
#include "evaluator/pool/protocol.hpp"
#include "evaluator/pool/verdict.hpp"

using namespace ptxbench;

TEST_CASE("base64 round-trips every tail length - so cubin bytes reach the worker intact") {
  for (size_t n = 0; n < 70; ++n) {
    std::vector<char> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = char((i * 37 + 11) & 0xFF);
    CHECK(protocol::base64_decode(protocol::base64_encode(bytes)) == bytes);
  }
  CHECK(protocol::base64_encode({'M', 'a', 'n'}) == "TWFu");
  CHECK_THROWS(protocol::base64_decode("TW!u"));
}

TEST_CASE("line reader splits lines - times out and sees end of file") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  protocol::line_reader reader(fds[0]);
  std::string line;
  CHECK(reader.read_line(line, 20) == protocol::line_reader::status::timeout);
  REQUIRE(protocol::write_line(fds[1], "{\"a\":1}"));
  REQUIRE(protocol::write_line(fds[1], "second"));
  CHECK(reader.read_line(line, 1000) == protocol::line_reader::status::line);
  CHECK(line == "{\"a\":1}");
  CHECK(reader.read_line(line, 1000) == protocol::line_reader::status::line);
  CHECK(line == "second");
  ::close(fds[1]);
  CHECK(reader.read_line(line, 1000) == protocol::line_reader::status::eof);
  ::close(fds[0]);
}

namespace {

sass_listing listing() {
  sass_listing s;
  s.available = true;
  s.instructions = {{"k", 0x00, "LDG", "LDG.E R2, desc[UR4][R2.64] ;"},
                    {"k", 0x10, "FFMA", "FFMA R4, R2, R3, R4 ;"},
                    {"k", 0x20, "HGMMA", "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;"},
                    {"k", 0x30, "HMMA", "HMMA.16816.F32.BF16 R8, R12, R16, R8 ;"},
                    {"k", 0x40, "SYNCS", "@!P0 SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x8], R3 ;"}};
  return s;
}

instruction_report report_for(const std::string& ptx, std::vector<std::string> sass, bool math) {
  instruction_report r;
  r.static_passed = true;
  instruction_check c;
  c.ptx = ptx;
  c.ptx_count = 1;
  c.sass_opcodes = std::move(sass);
  c.sass_count = 1;
  c.is_math = math;
  c.passed = true;
  r.checks.push_back(c);
  return r;
}

}  // namespace

TEST_CASE("a wgmma that is in the SASS but never executed fails the instructions stage") {
  auto r = report_for("wgmma.mma_async", {"HGMMA", "QGMMA"}, true);
  protocol::dynamic_counts d;
  d.ran = true;
  d.size = "M=384 N=256 K=1024";
  d.task_flops = 2.0 * 384 * 256 * 1024;
  d.counts = {{"k", 0x10, 1000000}, {"k", 0x20, 0}, {"other_library_kernel", 0x0, 99}};
  apply_dynamic_counts(r, listing(), d);
  CHECK(r.dynamic_ran);
  CHECK(r.checks[0].executed == 0);
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].note.find("never executed") != std::string::npos);
  CHECK(r.executed_by_opcode.at("FFMA") == 1000000);
  CHECK(r.executed_by_opcode.count("(unmapped pc)") == 0);  // library kernels are not the candidate's
  auto o = instruction_outcome(r, "");
  CHECK(o.status == stage_status::failed);
}

TEST_CASE("a math instruction passes only when it carries most of the task's FLOPs") {
  double task = 2.0 * 384 * 256 * 1024;
  double per_hmma = 2.0 * 16 * 8 * 16;
  for (double share : {0.5, 1.0}) {
    auto r = report_for("mma.sync", {"HMMA"}, true);
    protocol::dynamic_counts d;
    d.ran = true;
    d.task_flops = task;
    d.counts = {{"k", 0x30, uint64_t(share * task / per_hmma)}};
    apply_dynamic_counts(r, listing(), d);
    CHECK(r.checks[0].flop_share == doctest::Approx(share));
    CHECK(r.checks[0].passed == (share >= k_min_flop_share));
    CHECK(instruction_outcome(r, "").status == (share >= k_min_flop_share ? stage_status::passed : stage_status::failed));
  }
}

TEST_CASE("a dotted table opcode matches predicated SASS with longer modifiers") {
  auto r = report_for("mbarrier.try_wait", {"SYNCS.PHASECHK"}, false);
  protocol::dynamic_counts d;
  d.ran = true;
  d.task_flops = 1;
  d.counts = {{"k", 0x40, 12}};
  apply_dynamic_counts(r, listing(), d);
  CHECK(r.checks[0].executed == 12);
  CHECK(r.checks[0].passed);
}

TEST_CASE("without the dynamic count the stage is unverified - never passed") {
  auto r = report_for("wgmma.mma_async", {"HGMMA"}, true);
  auto o = instruction_outcome(r, "no GPU on this machine");
  CHECK(o.status == stage_status::unverified);
  CHECK(o.reason.find("no GPU on this machine") != std::string::npos);
  r.static_passed = false;
  r.checks[0].passed = false;
  r.checks[0].ptx_count = 0;
  CHECK(instruction_outcome(r, "no GPU").status == stage_status::failed);
}

TEST_CASE("a job survives the trip to the worker: task - manifest - cubin bytes and settings") {
  protocol::worker_job job;
  job.id = 42;
  job.t = load_task_file(std::string(PTXBENCH_SOURCE_DIR) + "/tasks/attention_fwd_bf16_wgmma.json");
  job.m = parse_manifest_text(
      R"json({"launches":[{"kernel":"k","grid":["cdiv(S,128)","B*H",1],"block":[256,1,1],)json"
      R"json("params":[{"tensor_map":{"tensor":"Q","box":[64,128],"swizzle":"128B","view":["B*H*S","D"]}},)json"
      R"json({"buffer":"O"},{"scalar":"scale"},{"const":0}]}],"scratch":[{"name":"w","bytes":"B*H*S*4","init":"poison"}]})json");
  job.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\xff'};
  job.seeds = {3, 4};
  job.hidden_seed = 99;
  job.time_limit_ms = 1234;
  auto back = protocol::job_from_json(nlohmann::json::parse(protocol::to_json(job).dump()));
  CHECK(back.id == 42);
  CHECK(back.cubin == job.cubin);
  CHECK(back.t.id == "attention_fwd_bf16_wgmma");
  CHECK(back.t.scalars.at("scale") == "rsqrt(D)");
  CHECK(back.m.launches[0].params[0].map.view == std::vector<std::string>{"B*H*S", "D"});
  CHECK(back.m.scratch[0].init == "poison");
  CHECK(back.seeds == job.seeds);
  CHECK(back.hidden_seed == 99);
  CHECK(back.time_limit_ms == 1234);
}

TEST_CASE("the verdict is the first failed stage - an unverified stage never counts as a pass") {
  evaluation_result r;
  for (int i = 0; i < stage_count; ++i) r.stages[stage(i)] = {stage_status::passed, "", 0.0};
  finish_verdict(r);
  CHECK(r.passed);
  r.stages[stage::instructions] = {stage_status::unverified, "no counts", 0.0};
  finish_verdict(r);
  CHECK_FALSE(r.passed);
  CHECK(r.verdict == stage::instructions);
  CHECK(r.headline == "instructions unverified: no counts");
  r.stages[stage::performance] = {stage_status::failed, "slow", 0.0};
  r.stages[stage::correctness] = {stage_status::failed, "C wrong", 0.0};
  finish_verdict(r);
  CHECK(r.verdict == stage::correctness);
  CHECK(r.headline == "correctness failed: C wrong");
}
