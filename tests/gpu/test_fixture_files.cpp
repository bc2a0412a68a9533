// The adversarial fixtures on a machine without a GPU: every folder of
// tests/fixtures/adversarial must pass the format and compile stages (and get
// the static instruction check its expected.json names, if it names one),
// and its expected.json must be one the GPU suite can read. A fixture broken
// here would only show as a wrong verdict on the GPU, much later.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"
#include "evaluator/compile/compile.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

fs::path fixtures_dir() { return fs::path(PTXBENCH_SOURCE_DIR) / "tests/fixtures/adversarial"; }
fs::path tasks_dir() { return fs::path(PTXBENCH_SOURCE_DIR) / "tasks"; }

// Where a fixture's kernel.ptx and manifest.json are: its own folder, or the
// kernel_dir its expected.json names (a kernel shared with the mutation
// rewrites under tasks/solutions/<task>/rewrites/).
fs::path kernel_dir_of(const std::string& name, const nlohmann::json& e) {
  if (e.contains("kernel_dir") && e["kernel_dir"].is_string())
    return fs::path(PTXBENCH_SOURCE_DIR) / e["kernel_dir"].get<std::string>();
  return fixtures_dir() / name;
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& d : fs::directory_iterator(fixtures_dir()))
    if (d.is_directory() && fs::exists(d.path() / "expected.json")) names.push_back(d.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool is_stage_name(const std::string& s) {
  try {
    parse_stage(s);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// What is wrong with one expected.json (empty: nothing), each problem naming its key.
std::vector<std::string> expected_problems(const nlohmann::json& e, const fs::path& tasks) {
  std::vector<std::string> p;
  if (!e.is_object()) return {"not a JSON object"};
  static const std::set<std::string> known = {"task",  "verdict",       "stages", "headline_contains",
                                              "headline_contains_any",
                                              "checks", "time_limit_ms", "run_timing", "static_instructions", "why",
                                              "kernel_dir", "hw_check"};
  for (auto it = e.begin(); it != e.end(); ++it)
    if (!known.count(it.key())) p.push_back("unknown key '" + it.key() + "'");
  if (!e.contains("task") || !e["task"].is_string()) {
    p.push_back("task: missing or not a string");
  } else {
    try {
      load_task(tasks, e["task"].get<std::string>());
    } catch (const std::exception& ex) {
      p.push_back(std::string("task: ") + ex.what());
    }
  }
  std::vector<nlohmann::json> verdicts;
  if (e.contains("verdict") && e["verdict"].is_string()) verdicts.push_back(e["verdict"]);
  else if (e.contains("verdict") && e["verdict"].is_array() && !e["verdict"].empty())
    for (const auto& v : e["verdict"]) verdicts.push_back(v);
  else p.push_back("verdict: missing, or neither a string nor a non-empty list");
  for (const auto& v : verdicts)
    // A verdict name (evaluator/api/verdict.hpp) a candidate can earn: an evaluator error is none.
    if (!v.is_string() || (v != "passed" && v != "partial" && !is_stage_name(v.get<std::string>())))
      p.push_back("verdict: '" + v.dump() + "' is neither a stage nor \"passed\" nor \"partial\"");
  if (e.contains("stages")) {
    if (!e["stages"].is_object()) p.push_back("stages: not an object");
    else
      for (auto it = e["stages"].begin(); it != e["stages"].end(); ++it) {
        if (!is_stage_name(it.key())) p.push_back("stages." + it.key() + ": not a stage");
        bool status_ok = it.value().is_string();
        if (status_ok) {
          try {
            parse_stage_status(it.value().get<std::string>());
          } catch (const std::exception&) {
            status_ok = false;
          }
        }
        if (!status_ok) p.push_back("stages." + it.key() + ": '" + it.value().dump() + "' is not a stage status");
      }
  }
  for (const char* key : {"headline_contains", "headline_contains_any"})
    if (e.contains(key)) {
      const auto& h = e[key];
      if (!h.is_array() || !std::all_of(h.begin(), h.end(), [](const auto& s) { return s.is_string() && !s.template get<std::string>().empty(); }))
        p.push_back(std::string(key) + ": not a list of non-empty strings");
    }
  if (e.contains("headline_contains_any") && e["headline_contains_any"].is_array() && e["headline_contains_any"].empty())
    p.push_back("headline_contains_any: empty (no headline could match)");
  if (e.contains("checks")) {
    static const std::set<std::string> checks = {"context_lost",        "guards_intact", "inputs_unchanged",
                                                 "stable_across_calls", "untouched",     "nans"};
    if (!e["checks"].is_object()) p.push_back("checks: not an object");
    else
      for (auto it = e["checks"].begin(); it != e["checks"].end(); ++it) {
        if (!checks.count(it.key())) p.push_back("checks." + it.key() + ": unknown check");
        if (!it.value().is_boolean()) p.push_back("checks." + it.key() + ": not true or false");
      }
  }
  if (e.contains("time_limit_ms") && (!e["time_limit_ms"].is_number() || e["time_limit_ms"].get<double>() <= 0))
    p.push_back("time_limit_ms: not a positive number");
  if (e.contains("run_timing") && !e["run_timing"].is_boolean()) p.push_back("run_timing: not true or false");
  if (e.contains("hw_check") && !e["hw_check"].is_boolean()) p.push_back("hw_check: not true or false");
  if (e.contains("static_instructions") && !e["static_instructions"].is_boolean())
    p.push_back("static_instructions: not true or false");
  if (e.contains("kernel_dir")) {
    if (!e["kernel_dir"].is_string()) {
      p.push_back("kernel_dir: not a string");
    } else {
      const fs::path dir = fs::path(PTXBENCH_SOURCE_DIR) / e["kernel_dir"].get<std::string>();
      if (!fs::is_regular_file(dir / "kernel.ptx") || !fs::is_regular_file(dir / "manifest.json"))
        p.push_back("kernel_dir: " + e["kernel_dir"].get<std::string>() + " lacks kernel.ptx or manifest.json");
    }
  }
  if (!e.contains("why") || !e["why"].is_string() || e["why"].get<std::string>().size() < 10)
    p.push_back("why: missing or too short to say what the kernel does");
  return p;
}

}  // namespace

TEST_CASE("adversarial fixtures: every expected.json is well-formed") {
  auto names = fixture_names();
  REQUIRE(names.size() >= 20);
  for (const auto& name : names) {
    nlohmann::json e = read_json_file(fixtures_dir() / name / "expected.json");
    auto problems = expected_problems(e, tasks_dir());
    std::string all;
    for (const auto& s : problems) all += "\n  " + s;
    CHECK_MESSAGE(problems.empty(), name << "/expected.json:" << all);
  }
}

TEST_CASE("adversarial fixtures: the expected.json check names what is wrong") {
  auto good = nlohmann::json::parse(R"({"task":"gemm_bf16_mma_sync","verdict":["performance","passed"],
      "stages":{"correctness":"passed"},"run_timing":true,"why":"an honest kernel"})");
  CHECK(expected_problems(good, tasks_dir()).empty());
  auto bad = nlohmann::json::parse(R"({"task":"no_such_task","verdict":"speed","stages":{"correctness":"ok"},
      "checks":{"guards":true},"headline":"x","why":""})");
  auto p = expected_problems(bad, tasks_dir());
  auto has = [&](const std::string& part) {
    return std::any_of(p.begin(), p.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
  };
  CHECK(has("unknown key 'headline'"));
  CHECK(has("no task 'no_such_task'"));
  CHECK(has("verdict: '\"speed\"'"));
  CHECK(has("stages.correctness"));
  CHECK(has("checks.guards"));
  CHECK(has("why:"));
  auto any_bad = nlohmann::json::parse(R"({"task":"gemm_bf16_mma_sync","verdict":"instructions","why":"a kernel with two right reasons",
      "headline_contains_any":[]})");
  CHECK(expected_problems(any_bad, tasks_dir()).size() == 1);
  any_bad["headline_contains_any"] = nlohmann::json::array({"when counted", ""});
  CHECK(expected_problems(any_bad, tasks_dir()).at(0).find("headline_contains_any: not a list") == 0);
}

TEST_CASE("adversarial fixtures: every folder is built by build.sh and run by the GPU suite") {
  std::string build = read_text_file(fixtures_dir() / "build.sh");
  std::string suite = read_text_file(fs::path(PTXBENCH_SOURCE_DIR) / "tests/gpu/test_adversarial.cpp");
  for (const auto& name : fixture_names()) {
    CHECK_MESSAGE(std::regex_search(build, std::regex("\\nptx " + name + " ")), name << " is not in build.sh");
    CHECK_MESSAGE(suite.find("run_case(\"" + name + "\")") != std::string::npos,
                  name << " has no run_case in tests/gpu/test_adversarial.cpp");
  }
}

TEST_CASE("adversarial fixtures: every kernel passes format and compile - or fails format as expected.json says") {
  auto ev = make_local_evaluator(local_evaluator_options{"off"});
  for (const auto& name : fixture_names()) {
    nlohmann::json e = read_json_file(fixtures_dir() / name / "expected.json");
    const fs::path dir = kernel_dir_of(name, e);
    evaluation_request req;
    req.t = load_task(tasks_dir(), e.at("task").get<std::string>());
    req.ptx = read_text_file(dir / "kernel.ptx");
    req.manifest_text = read_text_file(dir / "manifest.json");
    req.run_gpu = false;
    evaluation_result r = ev->evaluate(req);
    INFO(name << ": " << r.headline);
    // A format failure (a resource past its bound, a refused external function) is decided here already.
    if (e.value("verdict", nlohmann::json()) == "format") {
      CHECK_MESSAGE(r.stages[stage::format].status == stage_status::failed, name << " format is not failed");
      for (const auto& part : e.value("headline_contains", std::vector<std::string>{}))
        CHECK_MESSAGE(r.headline.find(part) != std::string::npos, name << ": the headline lacks '" << part << "'");
      continue;
    }
    CHECK_MESSAGE(r.stages[stage::format].status == stage_status::passed, name << " format: " << r.stages[stage::format].reason);
    CHECK_MESSAGE(r.stages[stage::compile].status == stage_status::passed, name << " compile: " << r.stages[stage::compile].reason);
    // The static half of the instruction check (targets in the PTX and the
    // SASS) is decided here already.
    if (e.contains("static_instructions"))
      CHECK_MESSAGE(r.instructions.static_passed == e["static_instructions"].get<bool>(),
                    name << " static instruction check: " << r.stages[stage::instructions].reason);
  }
}

// The counting-detection fixtures time a loop that must stay a loop in SASS:
// ptxas unrolls a constant-trip loop into one basic block (512 IMADs), which
// counting that patches each block once barely slows (the H100 run in which
// trap_when_counted's probe never fired).
TEST_CASE("the counting-detection fixtures time a loop that ptxas keeps") {
  if (nvdisasm_path().empty() || ptxas_path().empty()) {
    MESSAGE("skipped: nvdisasm or ptxas not found");
    return;
  }
  for (const char* name : {"clock_detect", "trap_when_counted"}) {
    CAPTURE(std::string(name));
    const std::string ptx = read_text_file(fixtures_dir() / name / "kernel.ptx", "fixture");
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    REQUIRE(m.ok);
    const sass_listing listing = disassemble(m.cubin);
    REQUIRE(listing.available);
    // The kept loop: a multiply-add by 3 at most three instructions before a
    // predicated branch (the loop's four instructions); the written-out chain:
    // 512 multiply-adds by 3.
    bool kept_loop = false;
    int by_three = 0;
    const auto& insts = listing.instructions;
    for (size_t k = 0; k < insts.size(); ++k) {
      const bool mad3 = insts[k].opcode == "IMAD" && insts[k].text.find(", 0x3,") != std::string::npos;
      by_three += mad3;
      for (size_t j = k + 1; mad3 && j < insts.size() && j <= k + 3; ++j)
        kept_loop = kept_loop || (insts[j].opcode == "BRA" && insts[j].text.find("@") != std::string::npos);
    }
    const bool straight = by_three >= 512;
    CHECK(kept_loop);
    CHECK(straight);
  }
}
