// The option table itself: each option once, every option documented, the
// same rules for the command line, the environment and the config file, and
// the docs written from it up to date.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "agent/cli/commands.hpp"
#include "agent/cli/option_help.hpp"
#include "agent/cli/option_reader.hpp"
#include "agent/cli/option_table.hpp"
#include "agent/cli/run_config.hpp"
#include "agent/loop/experiment_config.hpp"
#include "cli_test_util.hpp"
#include "evaluator/common/json_path.hpp"

using namespace ptxbench;
using namespace ptxbench::cli;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool accepted_by_table(const option& o, const nlohmann::json& v) {
  try {
    value_from_json(o, v, "probe");
    return true;
  } catch (const input_error&) {
    return false;
  }
}

// The parser's verdict on a valid config with `v` at the option's key.
bool accepted_by_parser(const option& o, const nlohmann::json& v) {
  nlohmann::json doc = {{"name", "x"}, {"llm", {{"kind", "embedded"}}}, {"endpoint_script", "s.json"},
                        {"max_llm_calls", 1}};
  nlohmann::json* slot = &doc;
  std::istringstream path(o.config_keys[0]);
  for (std::string key; std::getline(path, key, '.');) slot = &(*slot)[key];
  *slot = v;
  try {
    parse_experiment_config(doc, "probe");
    return true;
  } catch (const input_error&) {
    return false;
  }
}

// Values at and past the edges of what the row accepts.
std::vector<nlohmann::json> probes(const option& o) {
  switch (o.type) {
    case value_type::integer:
      return {o.min_integer - 1, o.min_integer, o.max_integer, o.max_integer + 1, "3", 1.5};
    case value_type::number:
      return {o.min_number - 1, o.min_number, o.max_number, o.max_number + 1, "3"};
    case value_type::choice: {
      std::vector<nlohmann::json> v(o.choices.begin(), o.choices.end());
      v.push_back("bogus");
      v.push_back(3);
      return v;
    }
    case value_type::list:
      if (o.rule) return {nlohmann::json::array({"http://a"}), nlohmann::json::array({"ftp://a"}), nlohmann::json::array()};
      return {nlohmann::json::array({"a"}), nlohmann::json::array({""}), nlohmann::json::array()};
    default:
      if (o.rule) return {"http://a", "ftp://a", "", 3};
      return {"a", "", 3};
  }
}

}  // namespace

TEST_CASE("no option id - variable - config key or command flag is defined twice") {
  std::set<std::string> ids, envs, keys;
  for (const option& o : all_options()) {
    INFO(o.id);
    CHECK(ids.insert(o.id).second);
    if (!o.positional) {
      CHECK(envs.insert(o.env).second);
      CHECK(o.env.rfind("PTXBENCH_", 0) == 0);
    }
    for (const auto& k : o.config_keys) CHECK(keys.insert(k).second);
  }
  std::set<std::string> used;
  for (const command_spec* c : all_commands()) {
    std::set<std::string> flags;
    for (const auto& id : c->options) {
      const option& o = find_option(id);  // throws for an id the table lacks
      INFO(c->name << " --" << o.flag);
      used.insert(id);
      if (o.positional) continue;
      CHECK(flags.insert(o.flag).second);
      for (const auto& a : o.aliases) CHECK(flags.insert(a).second);
      if (o.short_flag) CHECK(flags.insert(std::string(1, o.short_flag)).second);
      CHECK(o.flag != "help");
      CHECK(o.short_flag != 'h');
    }
    for (const auto& id : c->required)
      CHECK(std::find(c->options.begin(), c->options.end(), id) != c->options.end());
  }
  for (const option& o : all_options()) {
    INFO(o.id << " is taken by no command");
    CHECK(used.count(o.id) == 1);
  }
}

TEST_CASE("every option of every command is documented in its --help with its variable") {
  auto one_line = [](const std::string& text) {
    std::istringstream words(text);
    std::string out;
    for (std::string w; words >> w;) out += (out.empty() ? "" : " ") + w;
    return out;
  };
  for (const command_spec* c : all_commands()) {
    const std::string help = command_help(*c);
    const std::string flat = one_line(help);
    for (const auto& id : c->options) {
      const option& o = find_option(id);
      INFO(c->name << ": " << id);
      CHECK_FALSE(o.help.empty());
      CHECK(flat.find(o.positional ? o.value_name : "--" + o.flag) != std::string::npos);
      if (!o.positional) CHECK(flat.find(o.env) != std::string::npos);
      if (c->reads_experiment_config && !o.config_keys.empty()) {
        std::string keys;
        for (const auto& k : o.config_keys) keys += (keys.empty() ? "" : " and ") + k;
        CHECK(flat.find("config " + keys) != std::string::npos);
      }
    }
    // What the executable prints is this text.
    auto r = test::run_ptxbench({c->name, "--help"}, PTXBENCH_SOURCE_DIR);
    CHECK(r.exit_code == 0);
    CHECK(r.output == help);
  }
}

TEST_CASE("every default passes its own option's rules") {
  for (const option& o : all_options()) {
    if (o.default_value.empty()) continue;
    INFO(o.id << " = " << o.default_value);
    CHECK_NOTHROW(value_from_text(o, o.default_value, "default"));
  }
}

TEST_CASE("the table and the experiment config parser agree on every config-backed value") {
  // Stricter in the table, by design: a user's config may not hold these,
  // but configs stored by earlier runs (read by the parser alone) do.
  const std::set<std::string> table_only = {"tasks=[]",         "evaluator.url=[]",         "endpoint_latency_ms=-1.0",
                                            "llm.model=\"\"",
                                            "db=\"\"",            "tasks=[\"\"]",
                                            "suite=\"\""};
  for (const auto& id : run_command().options) {
    const option& o = find_option(id);
    if (o.config_keys.size() != 1) continue;
    for (const auto& v : probes(o)) {
      const std::string probe = o.config_keys[0] + "=" + v.dump();
      INFO(probe);
      const bool table = accepted_by_table(o, v);
      const bool parser = accepted_by_parser(o, v);
      if (table_only.count(probe)) CHECK((parser && !table));
      else CHECK(table == parser);
    }
  }
}

TEST_CASE("the same bad value is refused alike from the command line - the environment and a config file") {
  const char* argv[] = {"ptxbench run", "--gpu", "none"};
  CHECK_THROWS_WITH_AS(read_options("ptxbench run", run_command().options, 3, argv),
                       "--gpu: expected auto or off, not 'none'", input_error);
  ::setenv("PTXBENCH_GPU", "none", 1);
  CHECK_THROWS_WITH_AS(read_options("ptxbench run", run_command().options, 1, argv),
                       "PTXBENCH_GPU: expected auto or off, not 'none'", input_error);
  ::unsetenv("PTXBENCH_GPU");
  CHECK_THROWS_WITH_AS(value_from_json(find_option("gpu"), "none", "c.json: $.gpu"),
                       "c.json: $.gpu: expected auto or off, not 'none'", input_error);
  // Repeated lists add up; a repeated single value is refused; typos get a hint.
  const char* lists[] = {"x", "--experiment", "a,b", "--experiment", "c"};
  CHECK(read_options("ptxbench report", report_command().options, 5, lists).list("experiment") ==
        std::vector<std::string>{"a", "b", "c"});
  const char* twice[] = {"x", "--rounds", "2", "--rounds=3"};
  CHECK_THROWS_WITH_AS(read_options("ptxbench run", run_command().options, 4, twice),
                       doctest::Contains("--rounds is given twice"), input_error);
  const char* typo[] = {"x", "--round", "2"};
  CHECK_THROWS_WITH_AS(read_options("ptxbench run", run_command().options, 3, typo),
                       doctest::Contains("unknown option '--round' (did you mean --rounds?)"), input_error);
  const char* flag_value[] = {"x", "--quiet=no"};
  CHECK_THROWS_WITH_AS(read_options("ptxbench run", run_command().options, 2, flag_value),
                       doctest::Contains("--quiet takes no value"), input_error);
}

TEST_CASE("every shipped config passes the table's checks") {
  const char* argv[] = {"ptxbench run"};
  const option_values none = read_options("ptxbench run", run_command().options, 1, argv);
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(PTXBENCH_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path());
    CHECK_NOTHROW(read_run_config(none, entry.path().string()));
    ++checked;
  }
  CHECK(checked >= 2);
}

TEST_CASE("README's command synopsis and docs/options.md are written from the table") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const std::string readme = read_file(src / "README.md");
  INFO("run scripts/update_option_docs.sh to rewrite them");
  CHECK(readme.find("```\n" + commands_synopsis() + "```\n") != std::string::npos);
  CHECK(read_file(src / "docs/options.md") == options_reference());
}
