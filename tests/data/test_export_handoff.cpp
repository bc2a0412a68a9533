// What a trainer needs from an export beyond the records: provenance with the
// task's level and variant and balancing across them, the length of every
// record (bytes, tokens with a tokenizer, --max-tokens), the prompts of a
// suite for GRPO, and a dataset card with a license and a size category.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "agent/data/export.hpp"
#include "agent/prompt/prompt.hpp"
#include "evaluator/common/json_path.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path source = PTXBENCH_SOURCE_DIR;

export_options correction_options() {
  export_options o;
  o.kind = export_kind::correction;
  o.catalogue["gemm_bf16_wgmma"] = {"gemm", 2, {{"dtype", "bf16"}, {"layout", "nt"}}, {"full"}};
  o.catalogue["attention_fwd_bf16_wgmma"] = {"attention_fwd", 3, {{"causal", "no"}}, {"full"}};
  return o;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("export provenance carries the task's level and variant from the catalogue") {
  auto f = testing::make_fixture_db("handoff-provenance");
  auto o = correction_options();
  auto result = build_export(*f.store, o);
  REQUIRE(result.records.size() == 4);
  for (const auto& r : result.records) {
    CHECK_NOTHROW(check_record_schema(r.body, o));
    const auto& p = r.body["provenance"];
    if (p["task"] == "gemm_bf16_wgmma") {
      CHECK(p["level"] == 2);
      CHECK(p["variant"] == R"({"dtype":"bf16","layout":"nt"})");
    } else {
      CHECK(p["level"] == 3);
      CHECK(p["variant"] == R"({"causal":"no"})");
    }
  }
  // A task the catalogue lacks: level 0 (not given) and no variant.
  o.catalogue.clear();
  for (const auto& r : build_export(*f.store, o).records) {
    CHECK(r.body["provenance"]["level"] == 0);
    CHECK(r.body["provenance"]["variant"] == "{}");
  }
  o = correction_options();
  o.filter.levels = {3};
  CHECK(build_export(*f.store, o).records.size() == 1);
}

TEST_CASE("balance-by level and variant caps every cell of those axes x failing stage") {
  auto f = testing::make_fixture_db("handoff-balance");
  auto o = correction_options();
  o.balance = true;
  o.balance_by = {"level"};
  // Corrections: level 2 failed at compile twice and at correctness once; level 3 at format once.
  auto result = build_export(*f.store, o);
  CHECK(result.coverage.at("level 2").at("compile") == 2);
  CHECK(result.coverage.at("level 3").at("format") == 1);
  CHECK(result.cap == 1);
  CHECK(result.records.size() == 3);
  auto table = format_coverage(result, o);
  CHECK(table.find("coverage (level x failing stage, kept/total)") != std::string::npos);
  CHECK(table.find("format") < table.find("compile"));  // stage order
  o.balance_by = {"family", "variant"};
  result = build_export(*f.store, o);
  CHECK(result.coverage.count("gemm / dtype=bf16 layout=nt") == 1);
  CHECK(result.coverage.count("attention_fwd / causal=no") == 1);
  o.balance_by = {"colour"};
  CHECK_THROWS_AS(build_export(*f.store, o), input_error);
}

TEST_CASE("export measures each record and drops or flags those past --max-tokens") {
  auto f = testing::make_fixture_db("handoff-lengths");
  auto o = correction_options();
  auto plain = build_export(*f.store, o);
  for (const auto& r : plain.records) {
    CHECK(r.body["provenance"]["bytes"].get<int64_t>() > 10);
    CHECK(r.body["provenance"]["tokens"].is_null());
  }
  o.max_tokens = 10;
  CHECK_THROWS_WITH_AS(build_export(*f.store, o), doctest::Contains("--tokenizer"), input_error);
  o.tokenizer = load_tokenizer(source / "tests/fixtures/tokenizers/llama3.json");
  o.max_tokens.reset();
  auto counted = build_export(*f.store, o);
  std::vector<int64_t> tokens;
  for (const auto& r : counted.records) {
    // The prompt's messages and the completion, counted one message at a time.
    int64_t expected = 0;
    for (const auto& m : r.body["prompt"]) expected += o.tokenizer->count(m["content"].get<std::string>());
    expected += o.tokenizer->count(r.body["completion"][0]["content"].get<std::string>());
    CHECK(r.body["provenance"]["tokens"] == expected);
    tokens.push_back(expected);
  }
  std::sort(tokens.begin(), tokens.end());
  o.max_tokens = tokens[1];  // the two shortest fit (ties aside)
  auto limited = build_export(*f.store, o);
  CHECK(limited.over_max_dropped == static_cast<int>(std::count_if(tokens.begin(), tokens.end(), [&](int64_t t) {
          return t > tokens[1];
        })));
  CHECK(limited.records.size() + limited.over_max_dropped == 4);
  o.flag_over_max = true;
  auto flagged = build_export(*f.store, o);
  CHECK(flagged.records.size() == 4);
  CHECK(flagged.over_max_flagged == limited.over_max_dropped);
  int marked = 0;
  for (const auto& r : flagged.records) marked += r.body["provenance"]["over_max_tokens"].get<bool>();
  CHECK(marked == flagged.over_max_flagged);
  auto lengths = format_lengths(counted, false);
  CHECK(lengths.find("tokens (byte-level BPE, Split (Llama 3 pattern)") != std::string::npos);
  CHECK(lengths.find("records longer than 2048: 0,") != std::string::npos);
}

TEST_CASE("the dataset card has a license and a size category and the lengths") {
  auto f = testing::make_fixture_db("handoff-card");
  auto o = correction_options();
  o.license = "cc-by-4.0";
  auto result = build_export(*f.store, o);
  write_export_dir(f.dir / "out", result, o, {"runs.db", {*f.store->find_experiment("exp1")}});
  auto card = read(f.dir / "out" / "README.md");
  CHECK(card.rfind("---\nlicense: cc-by-4.0\nsize_categories:\n- n<1K\n", 0) == 0);
  CHECK(card.find("## Lengths") != std::string::npos);
  CHECK(card.find("- bytes: min ") != std::string::npos);
  CHECK(card.find("- tokens: not counted") != std::string::npos);
  CHECK(card.find("    - name: level\n      dtype: int64\n") != std::string::npos);
}

TEST_CASE("prompts export: one row per task of the suite with the round-0 prompt") {
  auto tasks = load_task_dir(source / "tasks");
  REQUIRE(tasks.size() >= 2);
  for (auto& t : tasks) t.suites = {"full"};  // one core task below, whatever the shipped suites are
  tasks[0].suites = {"core", "full"};
  tasks[0].level = 2;
  tasks[0].variant = {{"dtype", "bf16"}};
  export_options o;
  o.kind = export_kind::prompts;
  auto result = build_prompts_export(tasks, source / "prompts", o);
  CHECK(result.records.size() == tasks.size());  // every task is in full
  const prompt_library prompts(source / "prompts");
  const auto& first = result.records.front().body;
  CHECK_NOTHROW(check_record_schema(first, o));
  CHECK(first.size() == 6);
  CHECK(first["task_id"] == tasks[0].id);
  CHECK(first["family"] == tasks[0].family);
  CHECK(first["level"] == 2);
  CHECK(first["variant"] == R"({"dtype":"bf16"})");
  CHECK(first["suite"] == "full");
  CHECK(first["prompt"] == json::array({{{"role", "system"}, {"content", prompts.system_prompt(tasks[0])}},
                                        {{"role", "user"}, {"content", prompts.task_prompt(tasks[0])}}}));
  o.suite = "core";
  auto core = build_prompts_export(tasks, source / "prompts", o);
  REQUIRE(core.records.size() == 1);
  CHECK(core.records[0].body["suite"] == "core");
  o.suite = "nightly";
  CHECK_THROWS_WITH_AS(build_prompts_export(tasks, source / "prompts", o), doctest::Contains("nightly"), input_error);
  // The card and the features of a prompts export.
  auto dir = testing::fresh_dir("handoff-prompts");
  o.suite = "full";
  write_export_dir(dir / "out", result, o, {"tasks", {}});
  auto card = read(dir / "out" / "README.md");
  CHECK(card.find("  - name: task_id\n    dtype: string\n") != std::string::npos);
  CHECK(card.find("## Coverage (family x level)") != std::string::npos);
}
