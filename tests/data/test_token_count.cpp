// Token counts (agent/data/token_count.hpp) against the `tokenizers` library:
// tests/fixtures/tokenizers holds three byte-level BPE tokenizers trained by
// scripts/check_token_count.py (GPT-2's split, Llama 3's, Qwen 2's with NFC)
// and the counts the library made of edge-case texts and slices of real PTX.
#include <doctest/doctest.h>

#include <fstream>

#include "agent/data/pretokenize.hpp"
#include "agent/data/token_count.hpp"
#include "evaluator/common/json_path.hpp"

using namespace ptxbench;
using namespace ptxbench::data;
namespace fs = std::filesystem;

namespace {

const fs::path fixtures = fs::path(PTXBENCH_SOURCE_DIR) / "tests/fixtures/tokenizers";

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::vector<std::string> pieces(const std::string& text, split_pattern p) {
  std::vector<std::string_view> views;
  split_pieces(text, p, views);
  return {views.begin(), views.end()};
}

fs::path write_tokenizer(const std::string& name, const nlohmann::json& doc) {
  auto path = fs::temp_directory_path() / ("ptxbench-tok-" + std::to_string(::getpid()) + "-" + name + ".json");
  std::ofstream(path) << doc.dump();
  return path;
}

}  // namespace

TEST_CASE("token counts agree with the tokenizers library for GPT-2 and Llama 3 and Qwen 2 splits") {
  const auto expected = read_json(fixtures / "expected.json");
  const auto& texts = expected["texts"];
  REQUIRE(texts.size() > 20);
  for (const char* kind : {"gpt2", "llama3", "qwen2"}) {
    auto counter = load_tokenizer(fixtures / (std::string(kind) + ".json"));
    const auto& counts = expected["counts"][kind];
    int compared = 0, skipped = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const auto text = texts[i].get<std::string>();
      // Qwen 2 normalises to NFC: text it could change is counted as it is (and said so).
      if (std::string(kind) == "qwen2" && !nfc_quick_check(text)) {
        counter->count(text);
        ++skipped;
        continue;
      }
      INFO(kind << " text " << i << ": " << text.substr(0, 80));
      CHECK(counter->count(text) == counts[i].get<int64_t>());
      ++compared;
    }
    CHECK(compared >= 26);
    if (std::string(kind) == "qwen2") {
      CHECK(skipped == 1);  // "cafe" + combining acute
      CHECK(counter->unnormalised_texts() == 1);
    }
    CHECK(counter->description().find("byte-level BPE") == 0);
  }
}

TEST_CASE("pre-tokenizer splits follow the regex branches") {
  CHECK(pieces("It's  a\n\n  b", split_pattern::gpt2) == std::vector<std::string>{"It", "'s", " ", " a", "\n\n ", " b"});
  CHECK(pieces("x 12345", split_pattern::gpt2) == std::vector<std::string>{"x", " 12345"});
  CHECK(pieces("x 12345", split_pattern::llama3) == std::vector<std::string>{"x", " ", "123", "45"});
  CHECK(pieces("x 12345", split_pattern::qwen2) == std::vector<std::string>{"x", " ", "1", "2", "3", "4", "5"});
  CHECK(pieces("(foo;\n\n  bar", split_pattern::llama3) == std::vector<std::string>{"(foo", ";\n\n", " ", " bar"});
  CHECK(pieces("WE'RE", split_pattern::llama3) == std::vector<std::string>{"WE", "'RE"});
  CHECK(pieces("WE'RE", split_pattern::gpt2) == std::vector<std::string>{"WE", "'", "RE"});
  CHECK(pieces("a \t\n b", split_pattern::llama3) == std::vector<std::string>{"a", " \t\n", " b"});
  CHECK(pieces("end  ", split_pattern::llama3) == std::vector<std::string>{"end", "  "});
  CHECK(pieces(std::string("\xff\xfe") + "ab", split_pattern::gpt2) == std::vector<std::string>{"\xff\xfe", "ab"});
}

TEST_CASE("tokenizers the counter does not implement are refused with the component named") {
  auto doc = read_json(fixtures / "llama3.json");
  auto wordpiece = doc;
  wordpiece["model"]["type"] = "WordPiece";
  CHECK_THROWS_WITH_AS(load_tokenizer(write_tokenizer("wordpiece", wordpiece)), doctest::Contains("$.model.type"),
                       input_error);
  auto metaspace = doc;
  metaspace["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xe2\x96\x81"}};
  CHECK_THROWS_WITH_AS(load_tokenizer(write_tokenizer("metaspace", metaspace)), doctest::Contains("Metaspace"),
                       input_error);
  auto pattern = doc;
  pattern["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+";
  CHECK_THROWS_WITH_AS(load_tokenizer(write_tokenizer("pattern", pattern)), doctest::Contains("split pattern"),
                       input_error);
  auto lowercase = doc;
  lowercase["normalizer"] = {{"type", "Lowercase"}};
  CHECK_THROWS_WITH_AS(load_tokenizer(write_tokenizer("lowercase", lowercase)), doctest::Contains("$.normalizer"),
                       input_error);
  CHECK_THROWS_AS(load_tokenizer(fixtures / "missing.json"), input_error);
}
