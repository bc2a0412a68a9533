#pragma once
// Stall reasons per SASS PC through CUPTI's PC sampling API
// (cupti_pcsampling.h): every `period`-th cycle (2^period) each SM picks a
// warp and records the PC it is at and why it is not issuing. Kernels run
// serialised while sampling is on; their code is not changed.
//
// Facts from the probe on the H200 (scripts/probe/pc_sampling_probe.cpp,
// CUPTI 13.0): sampling must be enabled and configured before the module is
// loaded (the callback loads it), and PCs are function-relative byte offsets,
// the same numbers nvdisasm prints.
#include <cuda.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ptxbench {

struct pc_sample {
  std::string function;
  uint64_t pc_offset = 0;
  std::map<std::string, uint64_t> stalls;  // CUPTI's reason name -> samples
};

struct pc_sampling_result {
  bool ok = false;
  std::string error;         // CUPTI's words, when !ok
  bool unavailable = false;  // the machine cannot sample (privileges, support, another profiler)
  std::vector<pc_sample> pcs;
  uint64_t total_samples = 0, dropped_samples = 0;
  double setup_ms = 0, work_ms = 0, collect_ms = 0;
};

// Enables PC sampling on `context` (collection: kernel-serialised, started and
// stopped around `work`), runs `prepare` (which loads the module and sets up
// inputs: its kernels are not sampled) then `work` (which launches and
// synchronises), collects every record, and disables sampling again, also when
// a callback throws (the exception then propagates). `period` is CUPTI's sampling
// period exponent (5..31). At most `max_pcs` distinct PCs are kept per
// collection round. Never returns made-up samples.
// Kernel-serialized collection attributes each sample to its launch; continuous
// lets launches overlap (CUPTI's two collection modes).
enum class pc_sampling_mode { serialized, continuous };

pc_sampling_result sample_pcs(CUcontext context, uint32_t period, size_t max_pcs, const std::function<void()>& prepare,
                              const std::function<void()>& work, pc_sampling_mode mode = pc_sampling_mode::serialized);

}  // namespace ptxbench
