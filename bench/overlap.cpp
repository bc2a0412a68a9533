// Overlap benchmark: N trajectories x R rounds against an embedded endpoint
// that delays every reply by L ms. Prints the wall time next to the ideal.
//
// The ideal is the larger of two floors: the critical path of one trajectory,
// R x (L + E) with E the measured time of one evaluation alone, and the time
// the same run takes with instant replies (T0: evaluation throughput, measured,
// since compile and disassembly share this machine's cores). Target: wall <=
// 1.5 x ideal. Waiting on the model must never serialise the run.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/orchestrator.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

// Adds a fixed, serialised cost to every evaluation: a stand-in for one GPU queue.
class single_gpu_evaluator : public evaluator {
 public:
  single_gpu_evaluator(evaluator& inner, double gpu_ms) : m_inner(inner), m_gpu_ms(gpu_ms) {}
  evaluation_result evaluate(const evaluation_request& r) override {
    auto res = m_inner.evaluate(r);
    std::lock_guard<std::mutex> lock(m_mutex);
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_gpu_ms));
    return res;
  }
  std::string version() const override { return m_inner.version(); }
  std::string gpu_description() const override { return "simulated single GPU"; }

 private:
  evaluator& m_inner;
  double m_gpu_ms;
  std::mutex m_mutex;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  int trajectories = argc > 1 ? std::atoi(argv[1]) : 32;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  double latency_ms = argc > 3 ? std::atof(argv[3]) : 500;
  double gpu_ms = argc > 4 ? std::atof(argv[4]) : 250;
  const fs::path src = PTXBENCH_SOURCE_DIR;
  auto dir = fs::temp_directory_path() / ("ptxbench_overlap_" + std::to_string(::getpid()));
  fs::create_directories(dir);

  const fs::path demo = src / "configs/demo";
  const std::string typo_ptx = read_text_file(demo / "naive_gemm_typo.ptx");
  const std::string good_ptx = read_text_file(demo / "naive_gemm.ptx");
  const std::string manifest_text = read_text_file(demo / "naive_gemm.json");
  auto reply = [&](const std::string& ptx) {
    return scripted_reply{"```ptx\n" + ptx + "```\n```json\n" + manifest_text + "```\n", ""};
  };
  endpoint_script script;
  script.tasks["*"] = {{reply(typo_ptx)}, {reply(good_ptx)}, {reply(good_ptx)}};

  local_evaluator_options eo;
  eo.gpu_mode = "off";
  auto local = make_local_evaluator(eo);
  task t = load_task(src / "tasks", "gemm_bf16_mma_sync");
  // E: one evaluation alone (compile + static checks), mean of 5 after a warm-up.
  evaluation_request probe;
  probe.t = t;
  probe.ptx = good_ptx;
  probe.manifest_text = manifest_text;
  probe.run_gpu = false;
  local->evaluate(probe);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) local->evaluate(probe);
  const double eval_ms = seconds_since(t0) * 1000 / 5;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  prompt_library prompts(src / "prompts");
  std::printf("overlap benchmark: %d trajectories x %d rounds, replies delayed %.0f ms, one evaluation %.1f ms, %d cores\n",
              trajectories, rounds, latency_ms, eval_ms, cores);
  std::printf("%-34s %9s %9s %7s %s\n", "mode", "wall s", "ideal s", "ratio", "target <= 1.5");
  bool ok = true;
  auto run_once = [&](evaluator& eval, const std::string& name, double reply_ms, int* awaited) {
    experiment_config cfg;
    cfg.name = name;
    cfg.db = (dir / "bench.db").string();
    cfg.samples = trajectories;
    cfg.rounds = rounds;
    cfg.concurrency = trajectories;
    cfg.stop = stop_policy::all_rounds;
    cfg.gpu = "off";
    endpoint_script timed = script;
    timed.latency_ms = reply_ms;
    embedded_endpoint ep(timed);
    cfg.llm.kind = provider_kind::openai;
    cfg.llm.base_url = ep.base_url();
    cfg.llm.model = "scripted";
    auto llm = make_http_provider(cfg.llm);
    auto store = run_store::open(cfg.db);
    terminal_progress quiet(stderr, false, true);
    orchestrator orch(cfg, {t}, *llm, eval, *store, prompts, quiet);
    auto summary = orch.run(false);
    *awaited = ep.max_in_flight();
    return summary;
  };
  for (int mode = 0; mode < 2; ++mode) {
    single_gpu_evaluator gpu(*local, gpu_ms);
    evaluator& eval = mode == 0 ? static_cast<evaluator&>(*local) : gpu;
    double e_ms = mode == 0 ? eval_ms : eval_ms + gpu_ms;
    int awaited = 0;
    auto instant = run_once(eval, "instant" + std::to_string(mode), 0.0, &awaited);
    auto summary = run_once(eval, "delayed" + std::to_string(mode), latency_ms, &awaited);
    double ideal = std::max(rounds * (latency_ms + e_ms) / 1000.0, instant.wall_s);
    double ratio = summary.wall_s / ideal;
    ok = ok && ratio <= 1.5 && summary.completed == trajectories;
    std::printf("%-34s %9.2f %9.2f %7.2f %s (instant replies: %.2f s; max %d replies awaited at once)\n",
                mode == 0 ? "compile-only evaluator (CPU)" : "plus simulated single GPU queue", summary.wall_s, ideal,
                ratio, ratio <= 1.5 ? "ok" : "MISSED", instant.wall_s, awaited);
  }
  std::printf("serialised, the model's waits alone would take %.1f s\n", trajectories * rounds * latency_ms / 1000.0);
  fs::remove_all(dir);
  return ok ? 0 : 1;
}
