// Protocol framing and the dynamic half of the instructions stage, without a GPU.
#include <doctest/doctest.h>

#include <unistd.h>

#include "evaluator/pool/instruction_proof.hpp"
#include "evaluator/protocol/protocol.hpp"
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

TEST_CASE("a job survives the trip to the worker: task - manifest - cubin bytes and settings") {
  protocol::worker_job job;
  job.id = 42;
  job.t = load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "attention_fwd_bf16_wgmma");
  job.m = parse_manifest_text(
      R"json({"launches":[{"kernel":"k","grid":["cdiv(S,128)","B*H",1],"block":[256,1,1],)json"
      R"json("params":[{"tensor_map":{"tensor":"Q","box":[64,128],"swizzle":"128B","view":["B*H*S","D"]}},)json"
      R"json({"buffer":"O"},{"scalar":"scale"},{"const":0}]}],"scratch":[{"name":"w","bytes":"B*H*S*4","init":"poison"}]})json");
  job.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\xff'};
  job.seeds = {3, 4};
  job.hidden_seed = 99;
  job.timing_seed = 77;
  job.count_only = true;
  job.count_size = 2;
  job.count_seed = 55;
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
  CHECK(back.timing_seed == 77);
  CHECK(back.count_only);
  CHECK(back.count_size == 2);
  CHECK(back.count_seed == 55);
  job.count_size = int(job.t.sizes.size());  // one past the last size
  CHECK_THROWS(protocol::job_from_json(nlohmann::json::parse(protocol::to_json(job).dump())));
  CHECK(back.time_limit_ms == 1234);
}

TEST_CASE("a worker's result carries how sampling ended and the raw samples to the supervisor") {
  protocol::worker_result res;
  res.id = 7;
  performance_report p;
  p.candidate_ms = 0.88;
  p.speedup = 0.91;
  p.stop = sampling_stop::time_limit;
  p.baseline_noise = 0.03;
  p.candidate_sample_ms = {0.875f, 0.88f, 0.8825f};
  p.baseline_sample_ms = {0.8f, 0.81f, 0.79f};
  res.partial.performance = p;
  auto back = protocol::result_from_json(nlohmann::json::parse(protocol::to_json(res).dump()));
  REQUIRE(back.partial.performance.has_value());
  CHECK(back.partial.performance->stop == sampling_stop::time_limit);
  CHECK_FALSE(back.partial.performance->converged);
  CHECK(back.partial.performance->baseline_noise == doctest::Approx(0.03));
  CHECK(back.partial.performance->candidate_sample_ms == p.candidate_sample_ms);
  CHECK(back.partial.performance->baseline_sample_ms == p.baseline_sample_ms);
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

TEST_CASE("an evaluator error never hides a failure of the candidate before or after it") {
  evaluation_result r;
  for (int i = 0; i < stage_count; ++i) r.stages[stage(i)] = {stage_status::passed, "", 0.0};
  r.stages[stage::correctness] = {stage_status::failed, "C wrong", 0.0};
  r.stages[stage::performance] = {stage_status::error, "baseline failed: cuBLASLt status 7", 0.0};
  finish_verdict(r);
  CHECK_FALSE(r.passed);
  CHECK_FALSE(r.evaluator_error());
  CHECK(r.verdict == stage::correctness);
  CHECK(r.headline == "correctness failed: C wrong");
  auto j = to_json(r);
  CHECK(j["verdict"] == "correctness");
  CHECK_FALSE(j.contains("error_stage"));
  // An error before the failure (a worker lost outside the candidate's launches,
  // a static instruction failure known without the GPU): the failure stands too.
  r.stages[stage::runtime] = {stage_status::error, "worker lost", 0.0};
  r.stages[stage::correctness] = {stage_status::not_run, "not reached", 0.0};
  r.stages[stage::instructions] = {stage_status::failed, "target instructions missing: wgmma.mma_async", 0.0};
  finish_verdict(r);
  CHECK_FALSE(r.evaluator_error());
  CHECK(r.verdict == stage::instructions);
}

TEST_CASE("an evaluator error without a failure is the verdict - and says the evaluator failed") {
  evaluation_result r;
  for (int i = 0; i < stage_count; ++i) r.stages[stage(i)] = {stage_status::passed, "", 0.0};
  r.stages[stage::instructions] = {stage_status::unverified, "no counts", 0.0};
  r.stages[stage::performance] = {stage_status::error, "baseline failed: cuBLASLt status 7", 0.0};
  finish_verdict(r);
  CHECK_FALSE(r.passed);
  CHECK(r.evaluator_error());
  CHECK(r.verdict == stage::performance);
  CHECK(r.headline.find("evaluator error") == 0);
  auto j = to_json(r);
  CHECK(j["verdict"] == "error");
  CHECK(j["error_stage"] == "performance");
  auto back = evaluation_result_from_json(j);
  CHECK(back.evaluator_error());
  CHECK(back.verdict == stage::performance);
}
