// `run` against a `ptxbench evald` on loopback judges exactly as in-process:
// the demo experiment twice, once with each evaluator, the same verdicts.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "agent/store/request_log.hpp"
#include "agent/store/store.hpp"
#include "cli_test_util.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

// (task, sample, round) -> verdict, headline and every stage's status and reason.
std::map<std::tuple<std::string, int, int>, nlohmann::json> verdicts(const fs::path& db, int* evaluations) {
  std::map<std::tuple<std::string, int, int>, nlohmann::json> out;
  auto store = run_store::open(db, true);
  *evaluations = 0;
  for (const auto& e : store->experiments())
    for (const auto& tr : store->trajectories(e.id))
      for (const auto& tv : store->turns(tr.id)) {
        if (!tv.evaluation) continue;
        ++*evaluations;
        const auto& r = tv.evaluation->result;
        nlohmann::json stages = nlohmann::json::object();
        for (auto& [name, s] : r.at("stages").items()) stages[name] = {s.at("status"), s.at("reason")};
        out[{tr.task_id, tr.sample, tv.turn.round}] = {
            {"verdict", r.at("verdict")}, {"passed", r.at("passed")}, {"headline", r.at("headline")}, {"stages", stages}};
      }
  return out;
}

// The same verdicts up to which sample got which scripted reply: the embedded
// endpoint hands each task's replies out in arrival order, and with several
// trajectories in flight that order differs between two runs.
std::multiset<std::string> without_samples(const std::map<std::tuple<std::string, int, int>, nlohmann::json>& v) {
  std::multiset<std::string> out;
  for (const auto& [k, j] : v) out.insert(std::get<0>(k) + "/" + std::to_string(std::get<2>(k)) + "/" + j.dump());
  return out;
}

}  // namespace

TEST_CASE("run with evaluator.url on a loopback evald gives the same verdicts as in-process") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_remote_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path log = dir / "evald.log";
  pid_t evald = test::spawn_ptxbench({"evald", "--gpu", "off", "--port", "0", "--port-file", (dir / "port").string(),
                                      "--db", (dir / "evald.db").string()},
                                     src, log);
  std::string port;
  test::wait_until([&] { return bool(std::ifstream(dir / "port") >> port); }, std::chrono::seconds(15));
  REQUIRE_MESSAGE(!port.empty(), "evald did not start");

  auto local = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", (dir / "local.db").string(),
                                   "--name", "local", "--gpu", "off", "--quiet"},
                                  src);
  CHECK_MESSAGE(local.exit_code == 0, local.output);
  auto remote = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", (dir / "remote.db").string(),
                                    "--name", "remote", "--gpu", "off", "--quiet", "--evaluator-url",
                                    "http://127.0.0.1:" + port},
                                   src);
  CHECK_MESSAGE(remote.exit_code == 0, remote.output);
  ::kill(evald, SIGTERM);
  auto stopped = test::wait_for(evald, log);
  CHECK_MESSAGE(stopped.exit_code == 0, stopped.output);

  int local_n = 0, remote_n = 0;
  auto a = verdicts(dir / "local.db", &local_n);
  auto b = verdicts(dir / "remote.db", &remote_n);
  CHECK(local_n >= 8);  // 2 tasks x 2 samples, up to 3 rounds each
  CHECK(local_n == remote_n);
  CHECK(without_samples(a) == without_samples(b));
  // Replies without a candidate are judged by the loop itself; every other
  // evaluation went to the service and is in its log.
  int judged = 0;
  for (const auto& [k, v] : b)
    if (v.at("stages").at("format").at(0) != "failed" || v.at("stages").at("compile").at(0) != "not_run") ++judged;
  auto rows = request_log::open(dir / "evald.db")->rows();
  CHECK(int(rows.size()) >= judged);
  CHECK(judged > 0);
  auto exp = run_store::open(dir / "remote.db", true)->experiments();
  REQUIRE(exp.size() == 1);
  CHECK(exp[0].gpu.find("remote") != std::string::npos);
  fs::remove_all(dir);
}
