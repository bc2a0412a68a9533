// count_hardware through the CUPTI range profiler:
//   host: HostInitialize(chip, counter availability) -> ConfigAddMetrics ->
//         GetConfigImage (the counter passes are scheduled here);
//   target: RangeProfilerEnable(ctx) -> GetCounterDataSize/Initialize ->
//         SetConfig(user range, user replay) -> { Start, push/launch/pop per
//         range, Stop } until every pass is submitted -> DecodeData -> Disable;
//   host: EvaluateToGpuValues per range.
// The profiler and the host object are per call: a process that counts many
// evaluations opens and closes one Enable/Disable range each.
#include "evaluator/profile/hw_counter.hpp"
#include "evaluator/profile/cupti_support.hpp"
#include "evaluator/profile/hw_host.hpp"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <stdexcept>

namespace ptxbench {
namespace {

using profile_detail::check;
using profile_detail::host_object;
using profile_detail::hw_failure;
using profile_detail::passes_of;

void initialize_profiler_once() { check(profile_detail::initialize_profiler_once(), "cuptiProfilerInitialize", true); }

void check_device_supported(CUdevice device) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  check(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported", true);
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  throw hw_failure(profile_detail::unsupported_reason("CUPTI range profiling is", p), true);
}

std::vector<uint8_t> counter_availability(CUcontext context) {
  CUpti_Profiler_GetCounterAvailability_Params p{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  p.ctx = context;
  check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability", true);
  std::vector<uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability", true);
  return image;
}

std::string chip_of(CUdevice device) {
  CUpti_Device_GetChipName_Params p{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  p.deviceIndex = size_t(device);
  check(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName", true);
  return p.pChipName ? p.pChipName : "";
}

class context_scope {
 public:
  explicit context_scope(CUcontext c) {
    if (cuCtxPushCurrent(c) != CUDA_SUCCESS) throw hw_failure("cuCtxPushCurrent failed", false);
  }
  ~context_scope() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  context_scope(const context_scope&) = delete;
  context_scope& operator=(const context_scope&) = delete;
};

// The range profiler on a context; disabled when it goes.
class range_profiler {
 public:
  explicit range_profiler(CUcontext context) {
    CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.ctx = context;
    check(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable", true);
    m_object = p.pRangeProfilerObject;
  }
  ~range_profiler() {
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = m_object;
    cuptiRangeProfilerDisable(&p);
  }
  range_profiler(const range_profiler&) = delete;
  range_profiler& operator=(const range_profiler&) = delete;
  CUpti_RangeProfiler_Object* get() const { return m_object; }

 private:
  CUpti_RangeProfiler_Object* m_object = nullptr;
};

std::vector<uint8_t> counter_data_image(CUpti_RangeProfiler_Object* profiler, std::vector<const char*>& metrics,
                                        size_t ranges) {
  CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = metrics.data();
  size.numMetrics = metrics.size();
  size.maxNumOfRanges = ranges;
  // The range tree holds a root besides the ranges; room for twice as many
  // nodes costs a few KiB and never under-sizes it.
  size.maxNumRangeTreeNodes = uint32_t(2 * ranges + 1);
  check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<uint8_t> image(size.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
  return image;
}

// The configuration and the counter data image, for user ranges replayed by
// the caller (one nesting level, at most `max_ranges` ranges a pass).
void set_config(CUpti_RangeProfiler_Object* profiler, std::vector<uint8_t>& config, std::vector<uint8_t>& data,
                size_t max_ranges) {
  CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = profiler;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = data.size();
  set.pCounterDataImage = data.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = max_ranges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  check(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
}

// Decodes the passes into `data` and evaluates every range's metrics into
// `result` (values per range, named by the caller's first-pass names).
void decode_ranges(CUpti_RangeProfiler_Object* profiler, CUpti_Profiler_Host_Object* host, std::vector<uint8_t>& data,
                   std::vector<const char*>& names, const std::vector<std::string>& first_pass_names,
                   hw_count_result& result) {
  CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = profiler;
  check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  if (decode.numOfRangeDropped > 0)
    throw hw_failure(std::to_string(decode.numOfRangeDropped) + " ranges dropped by the profiler", false);
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  for (size_t r = 0; r < info.numTotalRanges; ++r) {
    std::vector<double> values(names.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    eval.pHostObject = host;
    eval.pCounterDataImage = data.data();
    eval.counterDataImageSize = data.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    check(cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");
    result.values.push_back(std::move(values));
    result.range_names.push_back(r < first_pass_names.size() ? first_pass_names[r] : std::to_string(r));
  }
}

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

std::string hardware_chip(CUcontext context, std::string& error) {
  try {
    context_scope scope(context);
    CUdevice device = 0;
    if (cuCtxGetDevice(&device) != CUDA_SUCCESS) throw hw_failure("cuCtxGetDevice failed", true);
    initialize_profiler_once();
    return chip_of(device);
  } catch (const hw_failure& e) {
    error = e.what();
    return "";
  }
}

hw_count_result count_hardware(CUcontext context, const std::vector<std::string>& metrics, size_t max_ranges,
                               int max_passes, const std::function<void(const hw_range_marks&)>& run_pass,
                               bool with_availability) {
  hw_count_result result;
  result.metrics = metrics;
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  try {
    context_scope scope(context);
    CUdevice device = 0;
    if (cuCtxGetDevice(&device) != CUDA_SUCCESS) throw hw_failure("cuCtxGetDevice failed", true);
    initialize_profiler_once();
    check_device_supported(device);
    host_object host(chip_of(device), with_availability ? counter_availability(context) : std::vector<uint8_t>{});
    std::vector<uint8_t> config = host.config(names);
    const int needed = passes_of(config);
    if (needed > max_passes)
      throw hw_failure("the metrics need " + std::to_string(needed) + " counter passes (at most " +
                           std::to_string(max_passes) + ")", true);
    // CUPTI may keep the name's pointer, not a copy, and read it again when it
    // decodes, so every name pushed lives here until the profiler is disabled
    // (declared before it, so it goes after). The worker's counters part
    // crashed in NVPW_CUDA_Profiler_DecodeCounters (docs/decisions.md, "range
    // profiler"); the probe's hw_two_ranges and hw_launch_and_library
    // scenarios reproduce its shape.
    std::deque<std::string> names_pushed;
    range_profiler profiler(context);
    std::vector<uint8_t> data = counter_data_image(profiler.get(), names, max_ranges);
    set_config(profiler.get(), config, data, max_ranges);
    auto t1 = clock::now();
    result.setup_ms = ms_between(t0, t1);

    size_t pushed = 0;
    std::vector<std::string> first_pass_names;
    hw_range_marks marks;
    marks.push = [&](const std::string& name) {
      if (++pushed > max_ranges) throw hw_failure("more than " + std::to_string(max_ranges) + " ranges in a pass", false);
      if (result.passes == 0) first_pass_names.push_back(name);
      // CUPTI is given a short name ("r0", "r1", ...; the caller's names are
      // kept here, by position): the counter data image holds range names in a
      // space of its own choosing, and the worker's names ("launch 0 (<kernel
      // name>)") can be long.
      names_pushed.push_back("r" + std::to_string(pushed - 1));
      CUpti_RangeProfiler_PushRange_Params p{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
      p.pRangeProfilerObject = profiler.get();
      p.pRangeName = names_pushed.back().c_str();
      check(cuptiRangeProfilerPushRange(&p), "cuptiRangeProfilerPushRange");
    };
    marks.pop = [&] {
      CUpti_RangeProfiler_PopRange_Params p{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
      p.pRangeProfilerObject = profiler.get();
      check(cuptiRangeProfilerPopRange(&p), "cuptiRangeProfilerPopRange");
    };
    bool all_submitted = false;
    while (!all_submitted) {
      if (result.passes >= needed + 1) throw hw_failure("the profiler asked for more passes than it scheduled", false);
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = profiler.get();
      check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
      pushed = 0;
      run_pass(marks);
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = profiler.get();
      check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
      all_submitted = stop.isAllPassSubmitted != 0;
      ++result.passes;
    }
    auto t2 = clock::now();
    result.run_ms = ms_between(t1, t2);
    decode_ranges(profiler.get(), host.get(), data, names, first_pass_names, result);
    result.decode_ms = ms_between(t2, clock::now());
    result.ok = true;
  } catch (const hw_failure& e) {
    result.ok = false;
    result.error = e.what();
    result.unavailable = e.machine;
    result.values.clear();
  }
  return result;
}

}  // namespace ptxbench
