// The evaluator of this host (make_local_evaluator): format, compile and
// static checks in the calling thread; runtime, correctness, the executed-
// instruction count and timing in the worker process of the least busy GPU.
#include "evaluator/api/local.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <tuple>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/common/clock.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/pool/gpu_slot.hpp"
#include "evaluator/pool/instruction_proof.hpp"
#include "evaluator/pool/local_options.hpp"
#include "evaluator/pool/profile_pass.hpp"
#include "evaluator/pool/slot_queue.hpp"
#include "evaluator/pool/timeline.hpp"
#include "evaluator/pool/verdict.hpp"
#include "ptxbench/version.hpp"

namespace ptxbench {
namespace {

using clock_type = std::chrono::steady_clock;
constexpr int k_start_timeout_ms = 120000;

// "sm_90a" runs on an sm_90 device only; plain "sm_90" on sm_90 and newer of
// the family is not needed by this suite, so the rule is exact.
std::string device_arch_of(const std::string& task_arch) {
  std::string a = task_arch;
  if (!a.empty() && a.back() == 'a') a.pop_back();
  return a;
}

std::string no_gpu_reason(const std::string& error) {
  if (error.find("libcuda") != std::string::npos || error.find("NO_DEVICE") != std::string::npos ||
      error.find("no CUDA-capable") != std::string::npos || error.find("NO_DRIVER") != std::string::npos)
    return "no GPU on this machine (" + error + ")";
  return "GPU worker unavailable: " + error;
}

struct static_part {
  sass_listing sass;
  instruction_report report;
  double ms = 0.0;
  std::chrono::steady_clock::time_point done{};
};

class local_evaluator final : public evaluator {
 public:
  explicit local_evaluator(const local_evaluator_options& o)
      : m_spares(spare_workers(o)),
        m_mains(main_workers(o)),
        m_spare_connections(spare_connections(o)),
        m_speculative_counting(speculative_counting(o)),
        m_hw_check(hw_check(o)) {
    // A worker that dies while we write to it must not kill the supervisor.
    ::signal(SIGPIPE, SIG_IGN);
    if (o.gpu_mode == "off") {
      m_no_gpu_reason = "GPU stages switched off (gpu mode off)";
      return;
    }
    std::string exe = find_worker(o);
    // The first worker sees every GPU and counts them.
    auto first = std::make_unique<gpu_slot>(exe, 0, m_spares, "", m_mains);
    first->set_spare_connections(m_spare_connections);
    worker_start s = first->start(k_start_timeout_ms);
    if (!s.ok) {
      m_no_gpu_reason = no_gpu_reason(s.error);
      return;
    }
    int count = s.hello.device_count;
    if (o.max_gpus > 0 && count > o.max_gpus) count = o.max_gpus;
    if (count <= 1) {
      m_slots.push_back(std::move(first));
    } else {
      // One slot per GPU, each of its workers seeing only that GPU.
      first.reset();
      std::vector<std::string> ids = visible_device_ids(count);
      std::vector<std::unique_ptr<gpu_slot>> started(static_cast<size_t>(count));
      std::vector<std::future<void>> starting;
      for (int d = 0; d < count; ++d)
        starting.push_back(std::async(std::launch::async, [&, d] {
          auto slot = std::make_unique<gpu_slot>(exe, d, m_spares, ids[size_t(d)], m_mains);
          slot->set_spare_connections(m_spare_connections);
          if (slot->start(k_start_timeout_ms).ok) started[size_t(d)] = std::move(slot);
        }));
      for (auto& f : starting) f.get();
      for (auto& slot : started)
        if (slot) m_slots.push_back(std::move(slot));
      if (m_slots.empty()) m_no_gpu_reason = "GPU workers could not start on any of the " + std::to_string(count) + " GPUs";
    }
    m_queue = std::make_unique<slot_queue>(m_slots.size(), m_mains);
  }

  std::string version() const override { return evaluator_version; }

  std::vector<gpu_usage> usage() const override {
    std::vector<gpu_usage> out;
    for (const auto& slot : m_slots) out.push_back(slot->usage());
    return out;
  }

  std::string gpu_description() const override {
    if (m_slots.empty()) return "none";
    auto h = m_slots.front()->hello();
    std::string d = h.name + " (" + h.arch + ")";
    if (m_slots.size() > 1) d = std::to_string(m_slots.size()) + "x " + d;
    return d;
  }

  evaluation_result evaluate(const evaluation_request& req) override {
    auto t0 = clock_type::now();
    evaluation_result r;
    r.evaluator_version = evaluator_version;
    r.gpu = gpu_description();
    for (int i = 0; i < stage_count; ++i) r.stages[stage(i)] = stage_outcome{stage_status::not_run, "", 0.0};
    profile_target target;
    try {
      run_stages(req, r, t0, target);
    } catch (const std::exception& e) {
      // Infrastructure failure inside this evaluation: reported, not a verdict on the candidate.
      r.stages[stage::runtime] = {stage_status::error, std::string("evaluator error: ") + e.what(), 0.0};
    }
    finish_verdict(r);
    // The profile comes after the verdict, which it never changes.
    if (req.profile && target.slot && r.performance && !r.evaluator_error()) attach_profile(req, target, r, t0);
    r.total_ms = ms_since(t0);
    note(r, t0, "done");
    std::stable_sort(r.timeline.begin(), r.timeline.end(),
                     [](const timeline_step& a, const timeline_step& b) { return a.at_ms < b.at_ms; });
    // Last, so that no message written on the way (the worker's, the
    // manifest check's, a launch refusal's) carries a hidden size's numbers.
    redact_hidden_sizes(r, req.t);
    return r;
  }

 private:
  // A seed no other role of this evaluation uses (never 0: 0 asks for a draw).
  uint64_t draw_seed(const std::set<uint64_t>& taken) {
    std::lock_guard lock(m_rng_mutex);
    for (;;) {
      uint64_t s = m_rng() >> 1;
      if (s != 0 && !taken.count(s)) return s;
    }
  }

  void choose_seeds(const evaluation_request& req, evaluation_result& r) {
    std::set<uint64_t> taken(req.seeds.begin(), req.seeds.end());
    r.seeds.public_seeds = req.seeds;
    r.seeds.hidden = req.hidden_seed != 0 ? req.hidden_seed : draw_seed(taken);
    taken.insert(r.seeds.hidden);
    r.seeds.timing = req.timing_seed != 0 && !taken.count(req.timing_seed) ? req.timing_seed : draw_seed(taken);
    taken.insert(r.seeds.timing);
    r.seeds.counting = draw_seed(taken);
  }

  // Where a candidate that reached the performance stage can be profiled.
  struct profile_target {
    gpu_slot* slot = nullptr;
    protocol::worker_job job;
  };

  void attach_profile(const evaluation_request& req, const profile_target& target, evaluation_result& r,
                      clock_type::time_point start) {
    const std::string key = task_to_json(req.t).dump() + '\x1f' + req.ptx + '\x1f' + req.manifest_text + '\x1f' +
                            target.slot->hello().name;
    profile_report p;
    if (!m_profiles.find(key, p)) {
      note(r, start, "profile started");
      p = run_profile_pass(*target.slot, target.job, req.ptx, *r.performance, m_job_ids);
      p.fingerprint = profile_fingerprint(key);
      m_profiles.put(key, p);
    }
    note(r, start, p.cached ? "profile from the cache" : "profile done");
    r.profile = std::move(p);
  }

  void run_stages(const evaluation_request& req, evaluation_result& r, clock_type::time_point start,
                  profile_target& target) {
    auto t0 = clock_type::now();
    choose_seeds(req, r);
    manifest m;
    std::string problem;
    try {
      m = parse_manifest_text(req.manifest_text);
    } catch (const input_error& e) {
      problem = std::string("manifest: ") + e.what();
    } catch (const std::exception& e) {
      problem = std::string("manifest: ") + e.what();
    }
    std::vector<std::string> problems;
    if (problem.empty()) {
      problems = check_manifest_against_task(m, req.t);
      // A module past the compile stage's size bounds is not parsed here: the
      // compile stage fails it, naming the bound.
      if (problems.empty() && ptx_bounds_problem(req.ptx).empty()) {
        auto entries = parse_ptx_entries(req.ptx);
        if (entries.empty()) problems.push_back("the PTX has no .entry kernel");
        else problems = check_manifest_against_ptx(m, entries, req.t);
        if (std::string calls = system_calls_problem(req.ptx); !calls.empty()) problems.push_back(calls);
      }
      for (const auto& p : problems) problem += (problem.empty() ? "" : "; ") + p;
    }
    r.stages[stage::format] = {problem.empty() ? stage_status::passed : stage_status::failed, problem, ms_since(t0)};
    note(r, start, "format checked");
    if (!problem.empty()) return;

    compiled_module cm = compile_ptx(req.ptx, req.t.arch);
    note(r, start, cm.ok ? "compiled" : "compile failed");
    r.compile = cm.report;
    // A compile the evaluator could not run (no ptxas, no temporary file...) is no verdict on the PTX.
    if (!cm.evaluator_error.empty())
      r.stages[stage::compile] = {stage_status::error, "compile could not run: " + cm.evaluator_error, cm.time_ms};
    else
      r.stages[stage::compile] = {cm.ok ? stage_status::passed : stage_status::failed,
                                  cm.ok ? "" : compile_headline(cm.report), cm.time_ms};
    if (!cm.ok) return;

    // The static check (nvdisasm: a few hundred ms) runs while the GPU works.
    std::future<static_part> static_check = std::async(std::launch::async, [&] {
      auto t = clock_type::now();
      static_part p;
      p.sass = disassemble(cm.cubin);
      p.report = static_instruction_check(req.t, req.ptx, p.sass);
      p.ms = ms_since(t);
      p.done = clock_type::now();
      return p;
    });
    std::string why_not = gpu_unavailable_reason(req);
    if (!why_not.empty()) {
      static_part p = static_check.get();
      note(r, start, "static check done", p.done);
      r.instructions = p.report;
      r.instructions.static_ms = p.ms;
      for (stage s : {stage::runtime, stage::correctness, stage::performance})
        r.stages[s] = {stage_status::not_run, why_not, 0.0};
      r.stages[stage::instructions] = instruction_outcome(r.instructions, why_not);
      r.stages[stage::instructions].time_ms = p.ms;
      return;
    }
    run_on_gpu(req, m, cm, static_check, r, start, target);
  }

  std::string gpu_unavailable_reason(const evaluation_request& req) const {
    if (!req.run_gpu) return "GPU stages not requested (compile and static checks only)";
    if (!req.t.runs_on_hopper)
      return req.t.arch + " task: not runnable on this Hopper GPU (" + k_compile_and_static_only + ")";
    if (m_slots.empty()) return m_no_gpu_reason;
    std::string dev = m_slots.front()->hello().arch;
    if (!dev.empty() && device_arch_of(req.t.arch) != dev)
      return req.t.arch + " task: not runnable on this GPU (" + dev + "); compile and static checks only";
    return "";
  }

  // Is this outcome of a main job the evaluator's failure rather than the
  // candidate's? A worker that could not start, died or hung outside the
  // candidate's launches, or reported an error status.
  static bool evaluator_failed(const job_outcome& out, const std::string& restart_error) {
    if (!restart_error.empty()) return true;
    if (out.end != job_end::result) return out.last.launch < 0;
    return out.result.partial.evaluator_error();
  }

  // The main job, retried once on a fresh worker when the evaluator failed.
  job_outcome run_main(gpu_slot& slot, protocol::worker_job& job, std::string& restart_error) {
    int used = 0;
    job_outcome out = slot.run(job, restart_error, &used);
    if (!evaluator_failed(out, restart_error)) return out;
    slot.replace_worker(used);
    job.id = ++m_job_ids;
    return slot.run(job, restart_error);
  }

  // Every (counted size, launch) on its own spare worker, concurrently.
  // Returns "" and the counts per size, or why the proof is incomplete;
  // `output_error` is set when a counted run computed a wrong result, and
  // `candidate_failure` when the candidate broke a counting pass twice (a
  // trap, a crash or a time-out in its own launch, retried once on a fresh spare).
  // With the hardware cross-check on, one more spare job runs it at the timed
  // size (launch -1 below); its outcome goes to `hw`.
  std::string count_instructions(gpu_slot& slot, const protocol::worker_job& main, const manifest& m, bool with_hw,
                                 std::vector<size_counts>& counted, std::string& output_error,
                                 std::string& candidate_failure, hw_outcome& hw,
                                 std::vector<counting_pass_time>& times, std::vector<pass_steps>& steps,
                                 const std::atomic<bool>* stop = nullptr) {
    std::vector<int> sizes = counted_size_indexes(main.t);
    struct pass {
      size_t size_slot;
      int launch;
      std::future<pass_result> result;
    };
    std::vector<pass> passes;
    counted.clear();
    for (size_t k = 0; k < sizes.size(); ++k) {
      counted.push_back(counted_size_facts(main.t, m, main.t.sizes[size_t(sizes[k])]));
      counted.back().counts.resize(m.launches.size());
      for (size_t l = 0; l < m.launches.size(); ++l) {
        protocol::worker_job job = main;
        job.count_only = true;
        job.count_launch = int(l);
        job.count_size = sizes[k];
        passes.push_back(
            {k, int(l), std::async(std::launch::async, [this, &slot, job, stop] { return run_pass(slot, job, stop); })});
      }
    }
    hw = hw_outcome{};
    if (with_hw && !counted.empty()) {
      protocol::worker_job job = main;
      job.count_only = job.hw_check = true;
      job.count_size = sizes.back();  // the timed size
      hw.asked = true;
      passes.push_back({counted.size() - 1, -1,
                        std::async(std::launch::async, [this, &slot, job, stop] { return run_pass(slot, job, stop); })});
    }
    std::string error;
    for (auto& p : passes) {
      pass_result pr = p.result.get();
      const std::string where =
          p.launch < 0 ? "the hardware cross-check at " + counted[p.size_slot].size
                       : "counting launch " + std::to_string(p.launch) + " (" + m.launches[size_t(p.launch)].kernel +
                             ") at " + counted[p.size_slot].size;
      for (const auto& [out, asked] : pr.attempts) {
        times.push_back({counted[p.size_slot].size, p.launch, pr.wall_ms, out.result.dynamic.time_ms,
                         out.result.dynamic.phase_ms});
        pass_steps ps{"count " + std::to_string(p.size_slot) + "." + std::to_string(p.launch) + ": ", asked, {}};
        ps.outcome.trail = out.trail;
        ps.outcome.sent_at = out.sent_at;
        steps.push_back(std::move(ps));
      }
      if (!pr.candidate.empty() && candidate_failure.empty()) candidate_failure = where + ": " + pr.candidate;
      if (p.launch < 0) {  // the hardware cross-check: its own outcome, never a missing SASS count
        const protocol::dynamic_counts& d = pr.outcome.result.dynamic;
        hw.ran = pr.why.empty();
        hw.missing = pr.why.empty() ? "" : where + ": " + pr.why;
        hw.counts = {d.hw_metrics, d.hw_values};
        if (hw.ran && !d.output_error.empty() && output_error.empty()) output_error = d.output_error;
        continue;
      }
      if (!pr.why.empty() && error.empty()) error = where + ": " + pr.why;
      if (pr.why.empty() && !pr.outcome.result.dynamic.output_error.empty() && output_error.empty())
        output_error = pr.outcome.result.dynamic.output_error;
      if (pr.why.empty()) counted[p.size_slot].counts[size_t(p.launch)] = std::move(pr.outcome.result.dynamic.counts);
    }
    if (!error.empty()) counted.clear();
    return error;
  }

  // One counting pass, and its retry on a fresh spare when the candidate broke
  // it (never when the evaluator could not count: that is unverified, nor
  // when the pass was stopped because its counts were no longer wanted).
  struct pass_result {
    job_outcome outcome;  // the last attempt's
    std::string why;      // "" when counted
    std::string candidate;  // the candidate broke both attempts: why
    std::vector<std::pair<job_outcome, clock_type::time_point>> attempts;  // trails and times only
    double wall_ms = 0;
  };
  pass_result run_pass(gpu_slot& slot, protocol::worker_job job, const std::atomic<bool>* stop) {
    pass_result r;
    const auto t0 = clock_type::now();
    for (int attempt = 0; attempt < 2; ++attempt) {
      job.id = ++m_job_ids;
      std::string start_error;
      const auto asked = clock_type::now();
      r.outcome = slot.count(job, start_error, stop);
      job_outcome times_only;  // the attempt's trail and times, without its counts
      times_only.trail = r.outcome.trail;
      times_only.sent_at = r.outcome.sent_at;
      times_only.result.dynamic.time_ms = r.outcome.result.dynamic.time_ms;
      times_only.result.dynamic.phase_ms = r.outcome.result.dynamic.phase_ms;
      r.attempts.push_back({std::move(times_only), asked});
      const bool lost = start_error.empty() && r.outcome.end != job_end::result && r.outcome.end != job_end::stopped;
      // A worker lost while a launch of the candidate ran (the progress named
      // it), or a launch of the candidate that failed: the candidate's.
      std::string candidate = lost && r.outcome.last.launch >= 0 ? r.outcome.cause
                              : !lost && start_error.empty()    ? r.outcome.result.dynamic.candidate_failure
                                                                : "";
      r.why = !start_error.empty()                   ? start_error
              : r.outcome.end != job_end::result    ? r.outcome.cause
              : !r.outcome.result.dynamic.ran        ? r.outcome.result.dynamic.error
                                                     : "";
      if (candidate.empty() || r.why.empty()) break;
      if (attempt == 1)
        r.candidate = candidate + "; again on a fresh worker: the kernel fails when its instructions are counted, "
                                  "while its checked runs were clean";
    }
    r.wall_ms = ms_since(t0);
    return r;
  }

  void run_on_gpu(const evaluation_request& req, const manifest& m, const compiled_module& cm,
                  std::future<static_part>& static_check, evaluation_result& r, clock_type::time_point start,
                  profile_target& target) {
    protocol::worker_job job;
    job.id = ++m_job_ids;
    job.t = req.t;
    job.m = m;
    job.cubin = cm.cubin;
    job.seeds = req.seeds;
    job.hidden_seed = r.seeds.hidden;
    job.timing_seed = r.seeds.timing;
    job.count_seed = r.seeds.counting;
    job.run_timing = req.run_timing;
    job.time_limit_ms = req.time_limit_ms;
    job.timing_budget_ms = req.timing_budget_ms;

    // The counting passes are worth running when the PTX names every target
    // (a cheap guess; the static check, running meanwhile, still decides:
    // without a target in the SASS the counts are not used).
    struct early_counts {
      std::vector<size_counts> counted;
      std::string missing, output_error, candidate_failure;
      hw_outcome hw;
      std::vector<counting_pass_time> times;
      std::vector<pass_steps> steps;
    };
    const bool worth_counting = !req.t.target_instructions.empty() && ptx_names_targets(req.ptx, req.t);
    const bool with_hw = wants_hw_check(m_hw_check, req.ptx);
    // The passes' own copy of the job (run_main may renumber `job`), declared
    // before `early`, whose destructor waits for them: a candidate that
    // fails correctness, or a main job that throws, leaves this function
    // with its speculative passes still running, and they read it (the
    // evaluator crashed in describe_size when it was destroyed first).
    const auto count_job = std::make_shared<const protocol::worker_job>(job);
    // Set when the passes' counts will not be used (the candidate failed its
    // checked runs, or the static check): they are stopped, not waited for.
    // A kernel that hangs would otherwise hold the evaluation for the passes'
    // own watchdog (60 s) and its retry on a fresh spare.
    const auto stop_counting = std::make_shared<std::atomic<bool>>(false);
    std::future<early_counts> early;
    const auto start_counting = [&](gpu_slot& slot) {
      return std::async(std::launch::async, [this, &slot, count_job, &m, with_hw, stop_counting] {
        early_counts c;
        c.missing = count_instructions(slot, *count_job, m, with_hw, c.counted, c.output_error, c.candidate_failure, c.hw,
                                       c.times, c.steps, stop_counting.get());
        return c;
      });
    };

    // The next GPU with a free main worker takes the main job (slot_queue).
    note(r, start, "waiting for a GPU");
    std::optional<slot_queue::lease> held;
    held.emplace(*m_queue);
    gpu_slot& slot = *m_slots[held->slot()];
    note(r, start, "GPU " + std::to_string(slot.device()) + " taken");
    // With nobody else waiting and a spare ready for every pass, the passes
    // run beside the main job (speculatively: a candidate that then fails
    // correctness has spent its spares); otherwise after it, once it is correct.
    // Their spares' replacements wait to make their contexts until the main
    // job is over (its timing would wait for them otherwise).
    struct spare_hold {
      gpu_slot* slot = nullptr;
      void release() {
        if (slot) slot->release_spare_starts();
        slot = nullptr;
      }
      ~spare_hold() { release(); }
    } hold;
    if (worth_counting && m_speculative_counting && m_queue->waiting() == 0 &&
        slot.ready_spares() >= int(counted_size_indexes(req.t).size() * m.launches.size()) + (with_hw ? 1 : 0)) {
      slot.hold_spare_starts();
      hold.slot = &slot;
      early = start_counting(slot);
      note(r, start, "counting passes started beside the main job");
    }
    std::string restart_error;
    job_outcome out = run_main(slot, job, restart_error);
    hold.release();
    note_trail(r, start, "main: ", out);
    note(r, start, "main job done");
    held.reset();
    r.gpu = gpu_description();
    target = {&slot, job};
    // After the main job the passes start while the static check (nvdisasm,
    // ~0.4 s of fixed start-up on the H200) may still run.
    if (!early.valid() && restart_error.empty() && out.end == job_end::result && worth_counting &&
        stage_passed(out.result.partial, stage::runtime) && stage_passed(out.result.partial, stage::correctness)) {
      early = start_counting(slot);
      note(r, start, "counting passes started");
    }
    static_part p = static_check.get();
    note(r, start, "static check done", p.done);
    const auto static_done = clock_type::now();
    r.instructions = p.report;
    r.instructions.static_ms = p.ms;
    r.stages[stage::instructions].time_ms = p.ms;
    std::vector<size_counts> counted;
    std::string missing, candidate_failure;
    hw_outcome hw;
    if (!restart_error.empty()) {
      for (stage s : {stage::runtime, stage::correctness, stage::performance})
        r.stages[s] = {stage_status::error, restart_error, 0.0};
      missing = restart_error;
    } else if (out.end != job_end::result) {
      bool candidate = out.last.launch >= 0;
      runtime_report rt;
      rt.error = candidate ? out.cause : "the GPU worker was lost outside the candidate's launches, twice: " + out.cause;
      rt.launch_index = out.last.launch;
      rt.size = out.last.size;
      rt.context_lost = true;
      r.runtime = rt;
      r.stages[stage::runtime] = {candidate ? stage_status::failed : stage_status::error, rt.error, 0.0};
      r.stages[stage::correctness] = {stage_status::not_run, "not reached: runtime failed", 0.0};
      r.stages[stage::performance] = {stage_status::not_run, "not reached: runtime failed", 0.0};
    } else {
      merge_worker_result(out.result, r);
      bool reached = r.stages[stage::runtime].status == stage_status::passed &&
                     r.stages[stage::correctness].status == stage_status::passed;
      if (reached && req.t.target_instructions.empty()) {
        missing = "the task targets no instruction";
      } else if (reached && !r.instructions.static_passed) {
        missing = "not counted: a target instruction is missing from the PTX or the SASS";
      } else if (reached) {
        std::string output_error;
        if (early.valid()) {
          early_counts c = early.get();
          note_passes(r, start, c.steps);
          counted = std::move(c.counted);
          missing = std::move(c.missing);
          output_error = std::move(c.output_error);
          candidate_failure = std::move(c.candidate_failure);
          hw = std::move(c.hw);
          r.instructions.counting = std::move(c.times);
          // The stage took the static check plus whatever counting was left after it.
          r.stages[stage::instructions].time_ms += ms_since(static_done);
        } else {
          auto t0 = clock_type::now();
          note(r, start, "counting passes started");
          std::vector<pass_steps> steps;
          missing = count_instructions(slot, job, m, with_hw, counted, output_error, candidate_failure, hw,
                                       r.instructions.counting, steps);
          note_passes(r, start, steps);
          r.stages[stage::instructions].time_ms += ms_since(t0);
        }
        if (!output_error.empty()) {
          // Right when checked, wrong when counted: the kernel behaves differently under observation.
          r.stages[stage::correctness] = {stage_status::failed, output_error, r.stages[stage::correctness].time_ms};
          r.correctness.note += (r.correctness.note.empty() ? "" : "; ") + output_error;
          counted.clear();
          missing = "not counted: the counted run was wrong";
        }
      }
    }
    if (early.valid()) {  // counts not used (the candidate or the static check failed): stop the passes
      stop_counting->store(true);
      early.wait();
    }
    decide_instructions(r, p.sass, req.t, counted, missing, candidate_failure, hw);
  }

  static bool stage_passed(const evaluation_result& r, stage s) {
    auto it = r.stages.find(s);
    return it != r.stages.end() && it->second.status == stage_status::passed;
  }

  // Every target instruction's name appears in the PTX text: the counting
  // passes are likely to be needed (a cheap guess; the static check decides).
  static bool ptx_names_targets(const std::string& ptx, const task& t) {
    for (const auto& target : t.target_instructions)
      if (ptx.find(target) == std::string::npos) return false;
    return true;
  }

  int m_spares;
  int m_mains;
  int m_spare_connections;
  bool m_speculative_counting;
  hw_check_policy m_hw_check;
  std::vector<std::unique_ptr<gpu_slot>> m_slots;
  std::unique_ptr<slot_queue> m_queue;
  std::string m_no_gpu_reason;
  std::atomic<uint64_t> m_job_ids{0};
  profile_cache m_profiles;
  std::mutex m_rng_mutex;
  std::mt19937_64 m_rng{(uint64_t(std::random_device{}()) << 32) ^ std::random_device{}()};
};

}  // namespace

std::unique_ptr<evaluator> make_local_evaluator(const local_evaluator_options& options) {
  return std::make_unique<local_evaluator>(options);
}

}  // namespace ptxbench
