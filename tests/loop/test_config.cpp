// Experiment configs: the shipped examples parse and ask each server for what
// it needs, and paths in a config file are relative to that file.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/llm/wire_format.hpp"
#include "agent/loop/experiment_config.hpp"
#include "agent/loop/progress.hpp"
#include "evaluator/common/json_path.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

const fs::path configs = fs::path(PTXBENCH_SOURCE_DIR) / "configs";

nlohmann::json request_body(const experiment_config& c) {
  std::vector<chat_message> messages{{"system", "S"}, {"user", "U"}};
  auto r = c.llm.kind == provider_kind::anthropic ? llm_detail::anthropic_request(c.llm, "", messages)
                                                   : llm_detail::openai_request(c.llm, "", messages);
  return nlohmann::json::parse(r.body);
}

}  // namespace

TEST_CASE("every example config parses and local servers need no API key") {
  for (const char* name : {"demo", "vllm", "sglang", "llamacpp", "ollama", "openai", "anthropic"}) {
    const auto path = configs / (std::string(name) + (std::string(name) == "demo" ? ".json" : ".example.json"));
    INFO(path.string());
    REQUIRE(fs::exists(path));
    experiment_config c;
    REQUIRE_NOTHROW(c = load_experiment_config(path.string()));
    // db paths in the examples point at the repository's runs/ folder.
    CHECK(fs::path(c.db).lexically_normal().parent_path() == (fs::path(PTXBENCH_SOURCE_DIR) / "runs").lexically_normal());
    const std::string n = name;
    if (n == "vllm" || n == "sglang" || n == "llamacpp" || n == "ollama") {
      CHECK(c.llm.api_key_env.empty());
      CHECK(c.llm.kind == provider_kind::openai);
      CHECK_NOTHROW(make_http_provider(c.llm));
    }
  }
}

TEST_CASE("the openai example asks a reasoning model for max_completion_tokens and reasoning effort") {
  auto c = load_experiment_config((configs / "openai.example.json").string());
  auto body = request_body(c);
  CHECK_FALSE(body.contains("max_tokens"));  // reasoning models reject it
  CHECK(body["max_completion_tokens"] == 32000);
  CHECK(body["reasoning_effort"] == "high");
  CHECK_FALSE(body.contains("temperature"));
  auto a = load_experiment_config((configs / "anthropic.example.json").string());
  auto ab = request_body(a);
  CHECK(ab["thinking"]["type"] == "enabled");
  CHECK(ab["thinking"]["budget_tokens"].get<int>() < ab["max_tokens"].get<int>());
}

TEST_CASE("the anthropic example streams and the ollama example names a model with its 32K context set") {
  // Anthropic refuses a 32K max_tokens request that is not streamed.
  auto a = load_experiment_config((configs / "anthropic.example.json").string());
  CHECK(a.llm.max_tokens > 21333);
  CHECK(request_body(a)["stream"] == true);
  // Ollama's OpenAI endpoint takes no context length from a request: the
  // model is one made with num_ctx 32768, as configs/README.md says how.
  auto o = load_experiment_config((configs / "ollama.example.json").string());
  CHECK(o.max_context_tokens == 32768);
  CHECK(o.llm.model == "qwen3-32k");
  std::ifstream in(configs / "README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  CHECK(readme.str().find("PARAMETER num_ctx 32768") != std::string::npos);
  CHECK(readme.str().find("ollama create qwen3-32k") != std::string::npos);
  CHECK(readme.str().find("OLLAMA_CONTEXT_LENGTH=32768") != std::string::npos);
}

TEST_CASE("paths in a config file are relative to the file and missing ones are named") {
  auto dir = fs::temp_directory_path() / ("ptxbench-config-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "script.json") << R"({"tasks": {}})";
  std::ofstream(dir / "sub" / "c.json") << R"({"name": "x", "db": "out/x.db", "tasks_dir": ")"
                                        << (fs::path(PTXBENCH_SOURCE_DIR) / "tasks").string()
                                        << R"(", "prompts_dir": "../prompts", "llm": {"kind": "embedded"},)"
                                        << R"( "endpoint_script": "script.json"})";
  auto c = load_experiment_config((dir / "sub" / "c.json").string());
  CHECK(c.db == (dir / "sub" / "out" / "x.db").string());
  CHECK(c.endpoint_script == (dir / "sub" / "script.json").string());
  CHECK(c.prompts_dir == (dir / "prompts").string());
  CHECK(c.tasks_dir == (fs::path(PTXBENCH_SOURCE_DIR) / "tasks").string());  // absolute stays
  // Not in the file: the default, relative to the working directory.
  std::ofstream(dir / "sub" / "d.json") << R"({"name": "y", "llm": {"kind": "embedded"}, "endpoint_script": "s"})";
  CHECK(load_experiment_config((dir / "sub" / "d.json").string()).tasks_dir == "tasks");

  CHECK_THROWS_WITH_AS(check_config_paths(c), doctest::Contains(("prompts_dir " + (dir / "prompts").string()).c_str()),
                       input_error);
  fs::create_directories(dir / "prompts");
  CHECK_NOTHROW(check_config_paths(c));
  fs::remove(dir / "sub" / "script.json");
  CHECK_THROWS_WITH_AS(check_config_paths(c), doctest::Contains("endpoint_script"), input_error);
  fs::remove_all(dir);
}

TEST_CASE("progress shows elapsed time and rate and ETA from the trajectories finished in this process") {
  CHECK(format_timing(0.0, 0, 10) == "0.0 s elapsed, ETA ?");
  CHECK(format_timing(30.0, 2, 6) == "30.0 s elapsed, 4.0 trajectories/min, ETA 1m30s");
  double now = 100.0;
  std::FILE* out = std::tmpfile();
  {
    terminal_progress p(out, false, false, [&] { return now; });
    p.on_start(4, 2);  // a resume: two were done before, they add nothing to the rate
    p.on_trajectory_started();
    now = 110.0;
    p.on_trajectory_done(true, true);
    now = 120.0;
    p.on_turn("t", 0, 1, "passed", "");
    p.on_finish();
  }
  std::rewind(out);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, out)) text += buf;
  std::fclose(out);
  CHECK(text.find("[3/4 done, 0 in flight, 20.0 s elapsed, 3.0 trajectories/min, ETA 0m20s] t#0 round 1: passed") !=
        std::string::npos);
  CHECK(text.find("3/4 trajectories done, 1 passed; 20.0 s elapsed") != std::string::npos);
}

TEST_CASE("max_context_tokens must leave room for the reply") {
  nlohmann::json j = {{"name", "x"}, {"max_context_tokens", 8000}, {"llm", {{"kind", "openai"}, {"model", "m"},
                                                                            {"base_url", "http://h/v1"},
                                                                            {"max_tokens", 8192}}}};
  CHECK_THROWS_WITH_AS(parse_experiment_config(j), doctest::Contains("larger than llm.max_tokens"), input_error);
  j["max_context_tokens"] = 32768;
  CHECK(parse_experiment_config(j).max_context_tokens == 32768);
  CHECK(experiment_config_to_json(parse_experiment_config(j))["max_context_tokens"] == 32768);
}
