// Teacher endpoints: repair rounds written by a second endpoint once the
// student has failed k times, judged like the student's, stored with their
// reasoning and author "teacher".
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/orchestrator.hpp"
#include "evaluator/common/json_path.hpp"
#include "fake_evaluator.hpp"

using namespace ptxbench;

namespace {

std::string reply(const std::string& verdict, const std::string& tag) {
  return "Attempt " + tag + "\n```ptx\n// verdict: " + verdict + "\n.version 8.7\n.target sm_90a\n.entry k() { ret; }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], \"params\": []}]}\n```\n";
}

struct teacher_run {
  std::filesystem::path dir;
  std::unique_ptr<run_store> store;
  std::vector<task> tasks;
  prompt_library prompts{std::string(PTXBENCH_SOURCE_DIR) + "/prompts"};
  terminal_progress progress{stderr, false, true};
  experiment_config config;
  test::fake_evaluator eval;

  explicit teacher_run(int after_failures) {
    dir = std::filesystem::temp_directory_path() / ("ptxbench_teacher_" + std::to_string(::getpid()) + "_" +
                                                    std::to_string(after_failures));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    store = run_store::open(dir / "run.db");
    for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
      if (t.id == "gemm_bf16_mma_sync") tasks.push_back(t);
    config.name = "t";
    config.samples = 1;
    config.rounds = 4;
    config.concurrency = 1;
    config.llm.kind = provider_kind::openai;
    config.llm.model = "student";
    config.llm.max_retries = 0;
    teacher_config tc;
    tc.llm.kind = provider_kind::openai;
    tc.llm.model = "teacher";
    tc.llm.max_retries = 0;
    tc.after_failures = after_failures;
    config.teacher = tc;
  }
  ~teacher_run() { std::filesystem::remove_all(dir); }

  std::vector<turn_view> run() {
    endpoint_script student, teacher;
    student.tasks["*"] = {{{reply("compile", "student")}}};
    teacher.tasks["*"] = {{{reply("passed", "teacher"), "the manifest's grid was wrong"}}};
    embedded_endpoint student_ep(student), teacher_ep(teacher);
    provider_config sc = config.llm, tc = config.teacher->llm;
    sc.base_url = student_ep.base_url();
    tc.base_url = teacher_ep.base_url();
    auto s = make_http_provider(sc);
    auto t = make_http_provider(tc);
    orchestrator o(config, tasks, *s, eval, *store, prompts, progress);
    o.set_teacher(t.get());
    auto summary = o.run(false);
    REQUIRE(summary.passed == 1);
    auto exp = store->find_experiment("t");
    return store->turns(store->trajectories(exp->id).at(0).id);
  }
};

}  // namespace

TEST_CASE("the teacher writes repair rounds once the student failed k times") {
  teacher_run f(2);
  auto turns = f.run();
  REQUIRE(turns.size() == 3);
  CHECK(turns[0].turn.author == "student");
  CHECK(turns[1].turn.author == "student");
  CHECK(turns[2].turn.author == "teacher");
  CHECK(turns[2].turn.model == "teacher");
  CHECK(turns[2].turn.reasoning == "the manifest's grid was wrong");
  // The teacher's answer was judged like any candidate.
  REQUIRE(turns[2].evaluation);
  CHECK(turns[2].evaluation->passed);
  CHECK(f.eval.calls() == 3);
}

TEST_CASE("after_failures 0 hands every repair round to the teacher") {
  teacher_run f(0);
  auto turns = f.run();
  REQUIRE(turns.size() == 2);
  CHECK(turns[0].turn.author == "student");
  CHECK(turns[1].turn.author == "teacher");
}

TEST_CASE("the teacher config is read and stored with the experiment") {
  nlohmann::json j = {{"name", "x"},
                      {"llm", {{"kind", "openai"}, {"base_url", "http://127.0.0.1:1/v1"}, {"model", "s"}}},
                      {"teacher", {{"kind", "openai"}, {"base_url", "http://127.0.0.1:2/v1"}, {"model", "big"},
                                   {"after_failures", 2}}}};
  auto c = parse_experiment_config(j);
  REQUIRE(c.teacher);
  CHECK(c.teacher->after_failures == 2);
  CHECK(c.teacher->llm.model == "big");
  auto back = parse_experiment_config(experiment_config_to_json(c));
  REQUIRE(back.teacher);
  CHECK(back.teacher->llm.base_url == "http://127.0.0.1:2/v1");
  j["teacher"]["after_failures"] = -1;
  CHECK_THROWS_AS(parse_experiment_config(j), input_error);
  j["teacher"] = {{"kind", "embedded"}};
  CHECK_THROWS_AS(parse_experiment_config(j), input_error);  // no endpoint_script
}
