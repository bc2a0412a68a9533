// Evaluation latency, throughput and timing fidelity on this machine's GPU.
//   1. per-stage latency of a GEMM 4096^3 candidate and an attention-forward
//      candidate (cold: references computed; warm: references cached);
//   2. candidates per minute over the suite (reference solutions and the
//      correct adversarial kernels), one evaluation after another;
//   3. timing fidelity: five evaluations of one candidate, spread of speedups.
// Prints its figures; writes them as JSON to the path given by --json.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/source_dir.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"
#include "evaluator/api/verdict.hpp"
#include "evaluator/api/solutions.hpp"
#include "evaluator/compile/compile.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

using bench::source_dir;

namespace {

struct candidate {
  std::string name;
  evaluation_request request;
};

std::optional<candidate> load(const std::string& name, const std::string& task_id, const fs::path& dir) {
  if (!fs::exists(dir / "kernel.ptx") || !fs::exists(dir / "manifest.json")) return std::nullopt;
  candidate c;
  c.name = name;
  c.request.t = load_task(source_dir() / "tasks", task_id);
  c.request.ptx = read_text_file(dir / "kernel.ptx");
  c.request.manifest_text = read_text_file(dir / "manifest.json");
  return c;
}

std::optional<candidate> solution(const std::string& task_id) {
  auto dir = solution_dir(task_id, default_solution_roots(source_dir() / "tasks"));
  if (!dir) return std::nullopt;
  return load("solution " + task_id, task_id, *dir);
}

nlohmann::json stage_row(const std::string& label, const evaluation_result& r) {
  std::printf("  %-34s", label.c_str());
  nlohmann::json j{{"label", label}, {"total_ms", r.total_ms}, {"verdict", verdict_name(r)}};
  for (int i = 0; i < stage_count; ++i) {
    double ms = r.stages.count(stage(i)) ? r.stages.at(stage(i)).time_ms : 0.0;
    std::printf(" %9.1f", ms);
    j[to_string(stage(i))] = ms;
  }
  std::printf(" %9.1f  %s\n", r.total_ms, verdict_name(r).c_str());
  // Where the instructions stage went: the static check, then each counting
  // pass (wall time from asking for a spare worker, the worker's own phases).
  std::printf("      instructions: static %.1f ms", r.instructions.static_ms);
  for (const auto& p : r.instructions.counting) {
    std::printf("; pass %s launch %d: wall %.1f, worker %.1f [", p.size.c_str(), p.launch, p.wall_ms, p.worker_ms);
    bool first = true;
    for (const auto& [name, ms] : p.phase_ms) {
      std::printf("%s%s %.1f", first ? "" : ", ", name.c_str(), ms);
      first = false;
    }
    std::printf("]");
  }
  std::printf("\n      timeline (ms):");
  for (const auto& step : r.timeline) std::printf(" %.0f %s |", step.at_ms, step.what.c_str());
  std::printf("\n");
  j["timeline"] = nlohmann::json::array();
  for (const auto& step : r.timeline) j["timeline"].push_back({step.what, step.at_ms});
  j["instructions_static_ms"] = r.instructions.static_ms;
  j["counting"] = nlohmann::json::array();
  for (const auto& p : r.instructions.counting)
    j["counting"].push_back(
        {{"size", p.size}, {"launch", p.launch}, {"wall_ms", p.wall_ms}, {"worker_ms", p.worker_ms}, {"phase_ms", p.phase_ms}});
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int suite_passes = 2;
  bool ncu_mode = false;  // one timed evaluation of the mma.sync fixture, for ncu to watch
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ncu")) ncu_mode = true;
    if (i + 1 >= argc) continue;
    if (!std::strcmp(argv[i], "--json")) json_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--passes")) suite_passes = std::atoi(argv[i + 1]);
  }
  auto t_start = std::chrono::steady_clock::now();
  auto ev = make_local_evaluator(local_evaluator_options{});
  double startup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
  std::printf("evaluator %s on %s (workers ready in %.0f ms)\n", ev->version().c_str(), ev->gpu_description().c_str(),
              startup_ms);
  if (ev->gpu_description() == "none") {
    // 77, a skip: the GPU suite runs this where a GPU should be, and counts a skip as a failed step.
    std::printf("no GPU: nothing to measure\n");
    return 77;
  }
  nlohmann::json out{{"gpu", ev->gpu_description()}, {"worker_start_ms", startup_ms}};
  if (ncu_mode) {
    auto c = load("correct_mma_sync", "gemm_bf16_mma_sync", source_dir() / "tests/fixtures/adversarial/correct_mma_sync");
    auto r = ev->evaluate(c->request);
    if (r.performance)
      std::printf("ncu-mode: candidate %.4f ms, baseline %.4f ms (%s)\n", r.performance->candidate_ms,
                  r.performance->baseline_ms, r.performance->baseline_name.c_str());
    return 0;
  }

  // 1. Latency per stage.
  std::optional<candidate> gemm = solution("gemm_bf16_wgmma_tma");
  if (!gemm) gemm = solution("gemm_bf16_wgmma");
  if (!gemm)
    gemm = load("adversarial correct_mma_sync", "gemm_bf16_mma_sync",
                source_dir() / "tests/fixtures/adversarial/correct_mma_sync");
  std::optional<candidate> attention = solution("attention_fwd_bf16_wgmma");
  std::printf("\nlatency per stage (ms)\n  %-34s %9s %9s %9s %9s %9s %9s %9s\n", "candidate", "format", "compile",
              "runtime", "correct", "instr", "perf", "total");
  out["latency"] = nlohmann::json::array();
  // cold: references computed; warm: references cached, the PTX new to the
  // compile cache (a comment makes it another text); resubmitted: the same
  // PTX again, compiled from the cache (an RL group's duplicate answers).
  int variant = 0;
  const auto fresh = [&variant](evaluation_request r) {
    r.ptx += "\n// eval_latency candidate " + std::to_string(++variant) + "\n";
    // The comment leaves the cubin as it was: forget its disassembly too, as
    // for a model's new candidate (whose cubin is new).
    disassembly_cache_clear();
    return r;
  };
  for (auto* c : {&gemm, &attention}) {
    if (!*c) continue;
    out["latency"].push_back(stage_row((*c)->name + " (cold)", ev->evaluate(fresh((*c)->request))));
    const evaluation_request warm = fresh((*c)->request);
    out["latency"].push_back(stage_row((*c)->name + " (warm)", ev->evaluate(warm)));
    out["latency"].push_back(stage_row((*c)->name + " (resubmitted)", ev->evaluate(warm)));
  }

  // 2. Throughput over the suite.
  std::vector<candidate> suite;
  for (const auto& t : load_task_dir(source_dir() / "tasks"))
    if (auto s = solution(t.id)) suite.push_back(*s);
  for (const char* fixture : {"correct_mma_sync", "ffma_correct", "cold_wgmma"}) {
    auto exp = nlohmann::json::parse(read_text_file(source_dir() / "tests/fixtures/adversarial" / fixture / "expected.json"));
    const fs::path dir = exp.contains("kernel_dir") ? source_dir() / exp["kernel_dir"].get<std::string>()
                                                    : source_dir() / "tests/fixtures/adversarial" / fixture;
    if (auto c = load(fixture, exp.at("task"), dir)) {
      c->request.run_timing = true;
      suite.push_back(*c);
    }
  }
  int evaluated = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int pass = 0; pass < suite_passes; ++pass)
    for (const auto& c : suite) {
      auto r = ev->evaluate(fresh(c.request));  // new candidates: no compile cache hits
      ++evaluated;
      if (pass == 0) std::printf("  suite: %-40s %7.0f ms  %.120s\n", c.name.c_str(), r.total_ms, r.headline.c_str());
    }
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double per_minute = evaluated / wall_s * 60.0;
  std::printf("\nthroughput: %d evaluations (%zu candidates x %d passes) in %.1f s: %.1f candidates/minute/GPU\n",
              evaluated, suite.size(), suite_passes, wall_s, per_minute);
  out["throughput"] = {{"evaluations", evaluated}, {"seconds", wall_s}, {"per_minute", per_minute}};

  // 3. Timing fidelity: five evaluations of one candidate.
  if (gemm) {
    std::vector<double> speedups, times;
    for (int i = 0; i < 5; ++i) {
      auto r = ev->evaluate(gemm->request);
      if (!r.performance) continue;
      speedups.push_back(r.performance->speedup);
      times.push_back(r.performance->candidate_ms);
      std::printf("  fidelity run %d: candidate %.4f ms (+-%.2f%%, %d samples), baseline %.4f ms (+-%.2f%%), speedup %.4f\n",
                  i, r.performance->candidate_ms, 100 * r.performance->candidate_rel_spread,
                  r.performance->candidate_samples, r.performance->baseline_ms, 100 * r.performance->baseline_rel_spread,
                  r.performance->speedup);
    }
    if (!speedups.empty()) {
      auto [lo, hi] = std::minmax_element(speedups.begin(), speedups.end());
      std::vector<double> sorted = speedups;
      std::sort(sorted.begin(), sorted.end());
      double median = sorted[sorted.size() / 2];
      double spread = median > 0 ? (*hi - *lo) / median : 0.0;
      std::printf("timing fidelity (%s): speedup median %.4f, spread (max-min)/median %.2f%% over %zu runs\n",
                  gemm->name.c_str(), median, 100 * spread, speedups.size());
      out["fidelity"] = {{"candidate", gemm->name}, {"speedups", speedups}, {"candidate_ms", times},
                         {"median_speedup", median}, {"spread", spread}};
    }
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
