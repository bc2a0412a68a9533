#include "evaluator/gpu/timing_baseline.hpp"

#include "evaluator/gpu/cuda_check.hpp"
#ifdef PTXBENCH_HAVE_BASELINES
#include "evaluator/baselines/baselines.hpp"
#endif

namespace ptxbench::gpu {

baseline_setup setup_baseline(worker_state& w, reference_cache& refs, const task& t, size_run& timed) {
  baseline_setup s;
  s.missing = "no baseline library in this worker build";
  if (t.baseline == "roofline") {
    s.missing = "no library covers this variant";  // the speedup is against the floor (summarise_samples)
    return s;
  }
#ifdef PTXBENCH_HAVE_BASELINES
  try {
    s.key = "baseline " + task_to_json(t).dump() + " " + timed.size_name;
    auto k = std::static_pointer_cast<kept_baseline>(refs.kept(s.key));
    baseline_buffers bb;
    if (!k) {
      k = std::make_shared<kept_baseline>();
      for (const auto& ts : t.tensors)
        if (ts.role != tensor_role::input)
          k->outputs.emplace_back(ts.name, device_memory(timed.buffers.at(ts.name)->bytes()));
    }
    for (const auto& ts : t.tensors)
      if (ts.role == tensor_role::input) bb.tensors[ts.name] = timed.addresses.at(ts.name);
    for (const auto& [name, mem] : k->outputs) bb.tensors[name] = mem.ptr();
    if (k->library && k->library->bind(bb)) {
      s.reused = true;
      w.report("binding the kept baseline at " + timed.size_name, 120000);
    } else {
      w.report("setting up the baseline at " + timed.size_name, 120000);
      k->library = make_baseline(t, timed.size, bb, w.stream, baseline_choice::later);
      k->chosen = false;
    }
    std::shared_ptr<baseline> b = k->library;
    if (b && b->available()) {
      s.kept = k;
      s.missing.clear();
      s.run = [b, &w] { b->run(w.stream); };
      refs.keep(s.key, k);
    } else {
      s.missing = b ? b->why_not() : "no baseline for " + t.baseline;
      refs.forget(s.key);
    }
  } catch (const cuda_error& e) {
    if (e.sticky) throw;
    refs.forget(s.key);
    s.failed = true;
    s.missing = std::string("baseline failed: ") + e.what();
  } catch (const std::exception& e) {
    refs.forget(s.key);
    s.failed = true;
    s.missing = std::string("baseline failed: ") + e.what();
  }
#else
  (void)w;
  (void)refs;
  (void)t;
  (void)timed;
#endif
  return s;
}

void choose_baseline(worker_state& w, reference_cache& refs, baseline_setup& s, const std::string& size_name) {
#ifdef PTXBENCH_HAVE_BASELINES
  if (!s.kept || !s.run) return;
  if (s.kept->chosen) {
    s.name = s.kept->library->name();
    return;
  }
  w.report("choosing the baseline's plan at " + size_name, 120000);
  try {
    s.kept->library->choose(w.stream);
    s.kept->chosen = true;
    s.name = s.kept->library->name();
  } catch (const cuda_error& e) {
    if (e.sticky) throw;
    s.failed = true;
    s.missing = std::string("baseline failed choosing its plan: ") + e.what();
    s.run = nullptr;
  } catch (const std::exception& e) {
    s.failed = true;
    s.missing = std::string("baseline failed choosing its plan: ") + e.what();
    s.run = nullptr;
  }
  if (!s.run) refs.forget(s.key);
#else
  (void)w;
  (void)refs;
  (void)s;
  (void)size_name;
#endif
}

}  // namespace ptxbench::gpu
