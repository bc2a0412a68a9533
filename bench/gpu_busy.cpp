// GPU busy benchmark: many trajectories in flight against a slow model, with
// the real evaluator on this machine's GPU.
//
// T trajectories (default 64) over the suite mix (every task with a reference
// solution that this GPU runs), R rounds each (default 2, all rounds played),
// every reply the task's reference solution delayed L ms (default 2000) by
// the embedded endpoint. The compile and disassembly caches are off unless
// --cache: every evaluation costs what a new candidate costs.
//
// Prints: evaluations, wall time, evaluations per minute over the busy window
// (first GPU job to last), the fraction of that window with at least one
// evaluation job on the GPU (the evaluator's own accounting: a checked or
// timed run, or a counting pass), NVML's utilisation over the same window
// (a kernel running; sampled every 100 ms), spare starts and how long timed
// runs waited for the GPU. Writes the figures as JSON to --json.
// --profile: feedback "profile", so every candidate that reaches the performance
// stage is also profiled after its verdict (profiling's cost on throughput,
// measured against the same run without it).
// --seconds S: stop starting rounds after S seconds (the rounds in flight finish)
// and report over what completed, so a time-limited call on a GPU machine still
// gets its figures.
// Usage: ptxbench_bench_gpu_busy [--trajectories 64] [--rounds 2] [--latency-ms 2000] [--cache] [--profile]
//        [--seconds S] [--json F]
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/orchestrator.hpp"
#include "bench/source_dir.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"
#include "evaluator/api/verdict.hpp"
#include "evaluator/api/solutions.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

using bench::source_dir;

namespace {

double seconds(clock_type::time_point a, clock_type::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Counts evaluations and their verdicts on the way through.
class counting_evaluator final : public evaluator {
 public:
  explicit counting_evaluator(evaluator& inner) : m_inner(inner) {}
  evaluation_result evaluate(const evaluation_request& r) override {
    auto res = m_inner.evaluate(r);
    std::lock_guard lock(m_mutex);
    ++m_count;
    const std::string verdict = verdict_name(res);
    ++m_verdicts[verdict];
    // What each verdict other than passed said (the first 200 characters): a
    // benchmark whose honest solutions stop passing under load shows why.
    if (verdict != "passed") ++m_headlines[r.t.id + ": " + verdict + ": " + res.headline.substr(0, 200)];
    m_total_ms += res.total_ms;
    // The hardware cross-check's outcome, by its first word ("off", "agreed:",
    // "disagreed:", "could not run:", "not compared:"); "" where the stage did not get that far.
    const std::string& hw = res.instructions.hardware;
    ++m_hardware[hw.empty() ? "not reached" : hw.substr(0, hw.find(':'))];
    if (res.profile) {
      ++m_profiles.asked;
      if (res.profile->cached) ++m_profiles.cached;
      else if (res.profile->ran) ++m_profiles.ran, m_profiles.ms.push_back(res.profile->time_ms);
    }
    per_task& t = m_tasks[r.t.id];
    t.total_ms.push_back(res.total_ms);
    for (stage s : {stage::compile, stage::correctness, stage::instructions, stage::performance})
      t.stage_ms[to_string(s)] += res.stages.count(s) ? res.stages.at(s).time_ms : 0.0;
    if (res.performance && res.performance->speedup > 0) {
      t.speedups.push_back(res.performance->speedup);
      t.timed.push_back({res.performance->speedup, res.performance->candidate_ms, res.performance->baseline_ms,
                         res.performance->baseline_name});
    }
    return res;
  }
  struct profiles {
    int asked = 0, ran = 0, cached = 0;  // evaluations carrying a profile; measured now; reused
    std::vector<double> ms;              // wall time of each profile measured now
  };
  profiles profiled() const {
    std::lock_guard lock(m_mutex);
    return m_profiles;
  }
  struct timed_one {
    double speedup, candidate_ms, baseline_ms;
    std::string baseline;
  };
  struct per_task {
    std::vector<double> total_ms, speedups;
    std::vector<timed_one> timed;
    std::map<std::string, double> stage_ms;  // summed
  };
  std::map<std::string, per_task> tasks() const {
    std::lock_guard lock(m_mutex);
    return m_tasks;
  }
  std::string version() const override { return m_inner.version(); }
  std::string gpu_description() const override { return m_inner.gpu_description(); }
  std::vector<gpu_usage> usage() const override { return m_inner.usage(); }
  int count() const {
    std::lock_guard lock(m_mutex);
    return m_count;
  }
  std::map<std::string, int> verdicts() const {
    std::lock_guard lock(m_mutex);
    return m_verdicts;
  }
  std::map<std::string, int> headlines() const {
    std::lock_guard lock(m_mutex);
    return m_headlines;
  }
  std::map<std::string, int> hardware() const {
    std::lock_guard lock(m_mutex);
    return m_hardware;
  }
  double mean_ms() const {
    std::lock_guard lock(m_mutex);
    return m_count ? m_total_ms / m_count : 0.0;
  }

 private:
  evaluator& m_inner;
  mutable std::mutex m_mutex;
  int m_count = 0;
  double m_total_ms = 0;
  std::map<std::string, int> m_verdicts;
  std::map<std::string, int> m_headlines;  // "task: verdict: headline" of verdicts other than passed
  std::map<std::string, int> m_hardware;   // the hardware cross-check's outcomes
  std::map<std::string, per_task> m_tasks;
  profiles m_profiles;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// NVML's GPU utilisation (percent of time a kernel ran), through dlopen so the
// benchmark needs no NVML at build time. Absent: available() is false.
class nvml_sampler {
 public:
  nvml_sampler() {
    m_lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!m_lib) return;
    auto init = reinterpret_cast<int (*)()>(::dlsym(m_lib, "nvmlInit_v2"));
    auto handle = reinterpret_cast<int (*)(unsigned, void**)>(::dlsym(m_lib, "nvmlDeviceGetHandleByIndex_v2"));
    m_util = reinterpret_cast<int (*)(void*, unsigned*)>(::dlsym(m_lib, "nvmlDeviceGetUtilizationRates"));
    if (!init || !handle || !m_util || init() != 0 || handle(0, &m_device) != 0) m_device = nullptr;
  }
  bool available() const { return m_device != nullptr; }
  // Percent, or -1.
  int gpu_percent() const {
    unsigned rates[2] = {0, 0};  // nvmlUtilization_t: gpu, memory
    return available() && m_util(m_device, rates) == 0 ? int(rates[0]) : -1;
  }

 private:
  void* m_lib = nullptr;
  void* m_device = nullptr;
  int (*m_util)(void*, unsigned*) = nullptr;
};

struct sample {
  clock_type::time_point at;
  double busy_s;
  int evaluations;
  int nvml;
};

}  // namespace

int main(int argc, char** argv) {
  int trajectories = 64, rounds = 2;
  double latency_ms = 2000, limit_s = 0;
  bool cache = false, profile = false;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cache")) cache = true;
    if (!std::strcmp(argv[i], "--profile")) profile = true;
    if (i + 1 >= argc) continue;
    if (!std::strcmp(argv[i], "--trajectories")) trajectories = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--latency-ms")) latency_ms = std::max(0.0, std::atof(argv[i + 1]));
    if (!std::strcmp(argv[i], "--json")) json_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--seconds")) limit_s = std::max(0.0, std::atof(argv[i + 1]));
  }
  if (!cache) setenv("PTXBENCH_COMPILE_CACHE_MB", "0", 1);
  auto local = make_local_evaluator(local_evaluator_options{});
  if (local->gpu_description() == "none") {
    // 77, a skip: the GPU suite runs this where a GPU should be, and counts a skip as a failed step.
    std::printf("gpu_busy: no GPU on this machine: nothing to measure\n");
    return 77;
  }
  const std::string arch = local->gpu_description().substr(local->gpu_description().rfind('(') + 1, 5);  // sm_90
  counting_evaluator eval(*local);

  // The suite mix: every task whose reference solution this GPU runs.
  std::vector<task> tasks;
  endpoint_script script;
  for (const task& t : load_task_dir(source_dir() / "tasks")) {
    const auto found = solution_dir(t.id, default_solution_roots(source_dir() / "tasks"));
    if (!found || t.arch.rfind(arch, 0) != 0) continue;
    const fs::path dir = *found;
    const std::string reply = "```ptx\n" + read_text_file(dir / "kernel.ptx") + "```\n```json\n" +
                              read_text_file(dir / "manifest.json") + "```\n";
    script.tasks[t.id] = std::vector<std::vector<scripted_reply>>(size_t(rounds), {scripted_reply{reply, ""}});
    tasks.push_back(t);
  }
  if (tasks.empty()) {
    std::printf("gpu_busy: no task with a reference solution runs on %s\n", local->gpu_description().c_str());
    return 1;
  }
  script.latency_ms = latency_ms;
  embedded_endpoint ep(script);

  const fs::path dir = fs::temp_directory_path() / ("ptxbench_gpu_busy_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  experiment_config cfg;
  cfg.name = "gpu-busy";
  cfg.db = (dir / "bench.db").string();
  cfg.samples = (trajectories + int(tasks.size()) - 1) / int(tasks.size());
  cfg.rounds = rounds;
  cfg.concurrency = std::min(trajectories, cfg.samples * int(tasks.size()));
  cfg.stop = stop_policy::all_rounds;
  if (profile) cfg.feedback = feedback_detail::profile;
  cfg.llm.kind = provider_kind::openai;
  cfg.llm.base_url = ep.base_url();
  cfg.llm.model = "scripted";
  auto llm = make_http_provider(cfg.llm);
  auto store = run_store::open(cfg.db);
  prompt_library prompts(source_dir() / "prompts");
  terminal_progress quiet(stderr, false, true);

  std::printf("gpu_busy: %zu tasks x %d samples = %d trajectories, %d in flight, %d rounds, replies delayed "
              "%.0f ms, caches %s, profiling %s, %s\n",
              tasks.size(), cfg.samples, cfg.samples * int(tasks.size()), cfg.concurrency, rounds, latency_ms,
              cache ? "on" : "off", profile ? "on" : "off",
              local->gpu_description().c_str());
  nvml_sampler nvml;
  std::vector<sample> samples;
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    while (!done.load()) {
      const auto u = eval.usage();
      samples.push_back({clock_type::now(), u.empty() ? 0.0 : u[0].busy_s, eval.count(), nvml.gpu_percent()});
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const gpu_usage before = eval.usage().at(0);
  orchestrator orch(cfg, tasks, *llm, eval, *store, prompts, quiet);
  const auto t0 = clock_type::now();
  std::atomic<bool> limit_hit{false};
  std::thread limiter([&] {
    while (limit_s > 0 && !done && seconds(t0, clock_type::now()) < limit_s)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (limit_s > 0 && !done) {
      limit_hit = true;
      orchestrator::request_stop();
    }
  });
  auto summary = orch.run(false);
  const auto t1 = clock_type::now();
  done = true;
  limiter.join();
  sampler.join();
  if (limit_hit)
    std::printf("  stopped at the --seconds limit (%.0f s): the figures are over the rounds that completed\n", limit_s);
  const gpu_usage after = eval.usage().at(0);

  // The busy window: from the first sample with GPU work to the first with the final busy time.
  size_t first = 0, last = samples.empty() ? 0 : samples.size() - 1;
  while (first < samples.size() && samples[first].busy_s <= before.busy_s) ++first;
  while (last > first && samples[last - 1].busy_s >= samples.back().busy_s) --last;
  double window_s = 0, busy_fraction = 0, nvml_mean = -1, per_minute = 0;
  int window_evals = 0;
  if (first < last) {
    window_s = seconds(samples[first].at, samples[last].at);
    busy_fraction = (samples[last].busy_s - samples[first].busy_s) / window_s;
    window_evals = samples[last].evaluations - samples[first].evaluations;
    per_minute = window_evals / window_s * 60.0;
    if (nvml.available()) {
      double sum = 0;
      int n = 0;
      for (size_t i = first; i <= last; ++i)
        if (samples[i].nvml >= 0) sum += samples[i].nvml, ++n;
      if (n) nvml_mean = sum / n;
    }
  }
  const double wall_s = seconds(t0, t1);
  const double spare_ms = after.spare_starts > before.spare_starts
                              ? 1000 * (after.spare_start_s - before.spare_start_s) / double(after.spare_starts - before.spare_starts)
                              : 0.0;
  const double gated_ms = after.spare_starts > before.spare_starts
                              ? 1000 * (after.spare_gated_s - before.spare_gated_s) / double(after.spare_starts - before.spare_starts)
                              : 0.0;
  std::printf("  evaluations: %d in %.1f s (trajectories completed %d of %d); mean evaluation %.0f ms\n", eval.count(),
              wall_s, summary.completed, summary.trajectories, eval.mean_ms());
  std::printf("  verdicts:");
  for (const auto& [v, n] : eval.verdicts()) std::printf(" %s %d;", v.c_str(), n);
  {
    const auto headlines = eval.headlines();
    int shown = 0;
    for (const auto& [h, n] : headlines)
      if (shown++ < 12) std::printf("\n    %dx %s", n, h.c_str());
    if (headlines.size() > 12) std::printf("\n    ... and %zu more", headlines.size() - 12);
  }
  std::printf("\n  hardware cross-check:");
  for (const auto& [v, n] : eval.hardware()) std::printf(" %s %d;", v.c_str(), n);
  std::printf("\n  busy window: %.1f s, %d evaluations: %.1f evaluations/minute/GPU\n", window_s, window_evals, per_minute);
  std::printf("  GPU busy (an evaluation job on the GPU): %.1f%% of the window, %.1f%% of the whole run\n",
              100 * busy_fraction, 100 * (after.busy_s - before.busy_s) / wall_s);
  if (nvml_mean >= 0) std::printf("  NVML utilisation (a kernel running), mean over the window: %.1f%%\n", nvml_mean);
  else std::printf("  NVML utilisation: not available\n");
  std::printf("  main-worker jobs %llu (%.1f s), counting passes %llu (%.1f s summed), spare starts %llu (mean %.0f ms, "
              "%.0f ms of it holding the GPU), timed runs waited %.1f s for the GPU in all\n",
              (unsigned long long)(after.jobs - before.jobs), after.main_s - before.main_s,
              (unsigned long long)(after.passes - before.passes), after.counting_s - before.counting_s,
              (unsigned long long)(after.spare_starts - before.spare_starts), spare_ms, gated_ms,
              after.timing_wait_s - before.timing_wait_s);
  std::printf("  model: at most %d replies awaited at once\n", ep.max_in_flight());
  const auto prof = eval.profiled();
  if (profile)
    std::printf("  profiles: %d evaluations carry one (%d measured, %d reused by fingerprint, the rest could not "
                "run); profile wall time median %.0f ms\n",
                prof.asked, prof.ran, prof.cached, median(prof.ms));
  if (after.spare_starts > before.spare_starts) {
    std::printf("  spare start phases (mean ms, as the workers saw them):");
    for (const auto& [phase, s_total] : after.spare_phase_s) {
      const double earlier = before.spare_phase_s.count(phase) ? before.spare_phase_s.at(phase) : 0.0;
      std::printf(" %s %.0f;", phase.c_str(), 1000 * (s_total - earlier) / double(after.spare_starts - before.spare_starts));
    }
    std::printf("\n");
  }
  if (after.jobs > before.jobs) {
    std::vector<std::pair<double, std::string>> phases;
    for (const auto& [phase, s_total] : after.main_phase_s) {
      const double earlier = before.main_phase_s.count(phase) ? before.main_phase_s.at(phase) : 0.0;
      phases.push_back({1000 * (s_total - earlier) / double(after.jobs - before.jobs), phase});
    }
    std::sort(phases.rbegin(), phases.rend());
    std::printf("  main-worker job phases (mean ms per job, longest first):");
    for (size_t i = 0; i < phases.size() && i < 12; ++i) std::printf(" %s %.0f;", phases[i].second.c_str(), phases[i].first);
    std::printf("\n");
  }
  // Per task: stage times under load (mean ms) and the speedups measured
  // under load (compare with the same solution judged alone: timing must not
  // change with the load).
  nlohmann::json per_task = nlohmann::json::object();
  std::printf("  %-34s %4s %9s %9s %9s %9s %9s  %s\n", "task", "n", "total", "compile", "correct", "instr", "perf",
              "speedup median [min, max]");
  for (const auto& [id, t] : eval.tasks()) {
    const double n = double(t.total_ms.size());
    const auto mean = [&](const char* s) { return t.stage_ms.count(s) ? t.stage_ms.at(s) / n : 0.0; };
    double lo = 0, hi = 0;
    if (!t.speedups.empty()) {
      lo = *std::min_element(t.speedups.begin(), t.speedups.end());
      hi = *std::max_element(t.speedups.begin(), t.speedups.end());
    }
    std::printf("  %-34s %4zu %9.0f %9.0f %9.0f %9.0f %9.0f  %.3f [%.3f, %.3f]\n", id.c_str(), t.total_ms.size(),
                median(t.total_ms), mean("compile"), mean("correctness"), mean("instructions"), mean("performance"),
                median(t.speedups), lo, hi);
    // Any evaluation timed more than 3% off the task's median speedup, with
    // what it was compared with (a speed verdict must not move with the load).
    const double mid = median(t.speedups);
    std::map<std::string, int> engines;
    for (const auto& e : t.timed) ++engines[e.baseline];
    if (engines.size() > 1)
      for (const auto& [name, n] : engines) std::printf("      baseline %dx: %s\n", n, name.c_str());
    for (const auto& e : t.timed)
      if (mid > 0 && std::fabs(e.speedup / mid - 1.0) > 0.03)
        std::printf("      off the median: speedup %.3f, candidate %.4f ms, baseline %.4f ms (%s)\n", e.speedup,
                    e.candidate_ms, e.baseline_ms, e.baseline.c_str());
    per_task[id] = {{"n", t.total_ms.size()},         {"median_total_ms", median(t.total_ms)},
                    {"mean_stage_ms", t.stage_ms},    {"speedup_median", median(t.speedups)},
                    {"speedup_min", lo},              {"speedup_max", hi}};
  }
  if (!json_path.empty()) {
    nlohmann::json j{{"gpu", local->gpu_description()},
                     {"tasks", tasks.size()},
                     {"trajectories", cfg.samples * int(tasks.size())},
                     {"rounds", rounds},
                     {"stopped_at_seconds_limit", limit_hit.load()},
                     {"latency_ms", latency_ms},
                     {"cache", cache},
                     {"profile", profile},
                     {"profiles", {{"asked", prof.asked}, {"ran", prof.ran}, {"cached", prof.cached},
                                   {"median_ms", median(prof.ms)}}},
                     {"evaluations", eval.count()},
                     {"wall_s", wall_s},
                     {"window_s", window_s},
                     {"window_evaluations", window_evals},
                     {"per_minute", per_minute},
                     {"busy_fraction", busy_fraction},
                     {"nvml_mean_percent", nvml_mean},
                     {"spare_start_ms", spare_ms},
                     {"spare_gated_ms", gated_ms},
                     {"timing_wait_s", after.timing_wait_s - before.timing_wait_s},
                     {"verdicts", eval.verdicts()},
                     {"hardware_cross_check", eval.hardware()},
                     {"per_task", per_task}};
    std::ofstream(json_path) << j.dump(2) << "\n";
  }
  fs::remove_all(dir);
  return 0;
}
