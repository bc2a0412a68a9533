// Export formats, history and reasoning modes, the typed schema and the dataset card.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "agent/data/export.hpp"
#include "evaluator/common/json_path.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;
using nlohmann::json;

namespace {

export_options options(export_kind kind, export_format format = export_format::prompt_completion,
                       export_history history = export_history::last, reasoning_mode reasoning = reasoning_mode::drop) {
  export_options o;
  o.kind = kind;
  o.format = format;
  o.history = history;
  o.reasoning = reasoning;
  return o;
}

std::vector<json> bodies(run_store& store, const export_options& o) {
  std::vector<json> out;
  for (const auto& r : build_export(store, o).records) out.push_back(r.body);
  return out;
}

const json* find_round(const std::vector<json>& records, int64_t trajectory, int round) {
  for (const auto& r : records) {
    if (r["provenance"]["trajectory"] == trajectory && r["provenance"]["round"] == round) return &r;
  }
  return nullptr;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("prompt_completion corrections keep the failed attempt in the prompt and only the fix in the completion") {
  auto f = testing::make_fixture_db("export-pc");
  auto r = bodies(*f.store, options(export_kind::correction));
  const json* a1 = find_round(r, f.trajectories["A"], 1);
  REQUIRE(a1 != nullptr);
  CHECK_FALSE(a1->contains("messages"));
  const json& prompt = (*a1)["prompt"];
  REQUIRE(prompt.size() == 4);
  CHECK(prompt[2] == json({{"role", "assistant"}, {"content", "reply A0"}}));
  CHECK(prompt[3] == json({{"role", "user"}, {"content", "FEEDBACK 1 for gemm_bf16_wgmma"}}));
  REQUIRE((*a1)["completion"].size() == 1);
  CHECK((*a1)["completion"][0] == json({{"role", "assistant"}, {"content", "reply A1"}}));
  // No record of any kind trains a failed attempt: every completion is a reply that got further.
  for (const auto& rec : r) {
    REQUIRE(rec["completion"].size() == 1);
    CHECK(rec["completion"][0]["content"] != rec["prompt"][2]["content"]);
    CHECK(rec["provenance"]["fix_stage"] != rec["provenance"]["failing_stage"]);
  }
}

TEST_CASE("history full puts every earlier attempt and its feedback before the fix") {
  auto f = testing::make_fixture_db("export-full");
  auto last = bodies(*f.store, options(export_kind::correction));
  auto full = bodies(*f.store, options(export_kind::correction, export_format::prompt_completion, export_history::full));
  const json* a2_last = find_round(last, f.trajectories["A"], 2);
  const json* a2 = find_round(full, f.trajectories["A"], 2);
  REQUIRE(a2_last != nullptr);
  REQUIRE(a2 != nullptr);
  CHECK((*a2_last)["prompt"].size() == 4);
  const json& p = (*a2)["prompt"];
  REQUIRE(p.size() == 6);
  CHECK(p[2]["content"] == "reply A0");
  CHECK(p[3]["content"] == "FEEDBACK 1 for gemm_bf16_wgmma");
  CHECK(p[4]["content"] == "reply A1");
  CHECK(p[5]["content"] == "FEEDBACK 2 for gemm_bf16_wgmma");
  CHECK((*a2)["completion"][0]["content"] == "reply A2");
  CHECK((*a2)["provenance"]["export_history"] == "full");
  CHECK_THROWS_AS(build_export(*f.store, options(export_kind::sft, export_format::messages, export_history::full)),
                  input_error);
}

TEST_CASE("reasoning is dropped or exported as reasoning_content or as an inline think block") {
  auto dir = testing::fresh_dir("export-reasoning");
  auto store = run_store::open(dir / "runs.db");
  experiment_row e;
  e.name = "r";
  e.model = "m1";
  int64_t eid = store->create_experiment(e);
  auto tid = testing::add_trajectory(*store, eid, "gemm_bf16_wgmma", "gemm", 0, "R",
                                     {{"compile", {}, "", "think 0"}, {"passed", 1.5, "", "think 1"}});
  auto field = bodies(*store, options(export_kind::correction, export_format::prompt_completion, export_history::last,
                                      reasoning_mode::field));
  REQUIRE(field.size() == 1);
  CHECK(field[0]["completion"][0]["reasoning_content"] == "think 1");
  CHECK(field[0]["completion"][0]["content"] == "reply R1");
  // The prompt is what was sent: the earlier reply without its reasoning; every message has the column.
  for (const auto& m : field[0]["prompt"]) CHECK(m["reasoning_content"] == "");
  CHECK(field[0]["provenance"]["trajectory"] == tid);

  auto think = bodies(*store, options(export_kind::sft, export_format::messages, export_history::last,
                                      reasoning_mode::inline_think));
  REQUIRE(think.size() == 1);
  CHECK(think[0]["messages"].back()["content"] == "<think>\nthink 1\n</think>\n\nreply R1");
  CHECK_FALSE(think[0]["messages"].back().contains("reasoning_content"));

  auto dropped = bodies(*store, options(export_kind::sft));
  CHECK(dropped[0]["completion"][0] == json({{"role", "assistant"}, {"content", "reply R1"}}));
  CHECK(dropped[0].dump().find("think") == std::string::npos);
}

TEST_CASE("every record of every kind and format has every column with one type") {
  auto f = testing::make_fixture_db("export-schema");
  for (auto kind : {export_kind::correction, export_kind::sft, export_kind::preference}) {
    for (auto format : {export_format::messages, export_format::prompt_completion}) {
      for (auto reasoning : {reasoning_mode::drop, reasoning_mode::field, reasoning_mode::inline_think}) {
        auto o = options(kind, format, export_history::last, reasoning);
        auto records = build_export(*f.store, o).records;
        REQUIRE_FALSE(records.empty());
        for (const auto& r : records) CHECK_NOTHROW(check_record_schema(r.body, o));
      }
    }
  }
  auto o = options(export_kind::correction);
  auto records = build_export(*f.store, o).records;
  // A speedup that was not measured is null, and the card types the column.
  REQUIRE(records.size() == 4);
  CHECK(records[0].body["provenance"]["speedup"] == doctest::Approx(0.5));
  CHECK(records[1].body["provenance"]["speedup"].is_null());  // A round 1: failed correctness
  CHECK(features_yaml(o).find("    - name: speedup\n      dtype: float64\n") != std::string::npos);
  CHECK(records[0].body["provenance"]["feedback"] == "full");
  CHECK(records[0].body["provenance"]["max_tokens"].is_null());
  json broken = records[0].body;
  broken["provenance"]["speedup"] = "fast";
  CHECK_THROWS_WITH_AS(check_record_schema(broken, o), "export record: $.provenance.speedup is not float64",
                       std::logic_error);
  broken = records[0].body;
  broken["provenance"].erase("round");
  CHECK_THROWS_AS(check_record_schema(broken, o), std::logic_error);
}

TEST_CASE("provenance carries the run's feedback level and history policy and sampling settings") {
  auto dir = testing::fresh_dir("export-settings");
  auto store = run_store::open(dir / "runs.db");
  experiment_row e;
  e.name = "s";
  e.model = "m1";
  e.config = {{"feedback", "stage"},
              {"history", "last_k"},
              {"history_k", 2},
              {"llm", {{"temperature", 1}, {"top_p", 0.95}, {"max_tokens", 16384}, {"seed", 7}, {"extra", {{"min_p", 0.1}}}}}};
  int64_t eid = store->create_experiment(e);
  testing::add_trajectory(*store, eid, "gemm_bf16_wgmma", "gemm", 0, "S", {{"compile"}, {"passed", 1.1}});
  auto o = options(export_kind::correction);
  auto r = bodies(*store, o);
  REQUIRE(r.size() == 1);
  const json& p = r[0]["provenance"];
  CHECK(p["run_history"] == "last_k");
  CHECK(p["run_history_k"] == 2);
  CHECK(p["temperature"].is_number_float());
  CHECK(p["temperature"] == doctest::Approx(1.0));
  CHECK(p["top_p"] == doctest::Approx(0.95));
  CHECK(p["max_tokens"] == 16384);
  CHECK(p["seed"] == 7);
  CHECK(json::parse(p["sampling_extra"].get<std::string>()) == json({{"min_p", 0.1}}));
  CHECK_NOTHROW(check_record_schema(r[0], o));
}

TEST_CASE("export to a directory writes the data and a dataset card with configs and features and coverage") {
  auto f = testing::make_fixture_db("export-dir");
  auto o = options(export_kind::correction);
  auto result = build_export(*f.store, o);
  auto out = f.dir / "out";
  card_source source{"runs.db", {*f.store->find_experiment("exp1")}};
  write_export_dir(out, result, o, source);
  auto data = read(out / "data" / "train.jsonl");
  std::ostringstream expected;
  write_jsonl(expected, result.records);
  CHECK(data == expected.str());
  auto card = read(out / "README.md");
  CHECK(card.rfind("---\nlicense: unknown\nsize_categories:\n- n<1K\nconfigs:\n- config_name: default\n  data_files:\n"
                   "  - split: train\n    path: data/train.jsonl\n",
                   0) == 0);
  CHECK(card.find("dataset_info:\n  features:\n  - name: prompt\n    list:\n") != std::string::npos);
  CHECK(card.find("| exp1 | m1 | embedded | 0.1.0 |") != std::string::npos);
  // Coverage columns in stage order, as the terminal table.
  CHECK(card.find("| family | format | compile | correctness | total |") != std::string::npos);
  CHECK(card.find("| gemm | 0 | 2 | 1 | 3 |") != std::string::npos);
  // Writing again over its own export is fine; a directory holding anything else is refused.
  CHECK_NOTHROW(write_export_dir(out, result, o, source));
  std::filesystem::create_directories(f.dir / "other");
  std::ofstream(f.dir / "other" / "notes.txt") << "mine";
  CHECK_THROWS_AS(write_export_dir(f.dir / "other", result, o, source), input_error);
  CHECK(read(f.dir / "other" / "notes.txt") == "mine");
}

TEST_CASE("a trained reply that ended at the token limit is marked cut_off in its provenance") {
  auto f = testing::make_fixture_db("export-cutoff");
  int64_t e = f.experiment_id;
  auto cut = testing::add_trajectory(*f.store, e, "gemm_bf16_wgmma", "gemm", 2, "E",
                                     {{"compile"}, {"passed", 1.1, "", "", "length"}});
  auto r = bodies(*f.store, options(export_kind::correction));
  const json* e1 = find_round(r, cut, 1);
  REQUIRE(e1 != nullptr);
  CHECK((*e1)["provenance"]["cut_off"] == true);
  const json* a1 = find_round(r, f.trajectories["A"], 1);
  REQUIRE(a1 != nullptr);
  CHECK((*a1)["provenance"]["cut_off"] == false);
}
