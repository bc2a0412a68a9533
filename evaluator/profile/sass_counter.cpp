// count_executed_sass through the CUPTI SASS metrics API:
//   once per process: profiler init, chip name, metric id, SetConfig(device);
//   per call: device support check -> Enable(context, lazy patching) ->
//   work() -> GetDataProperties -> FlushData -> Disable.
// Flushing must happen inside the Enable/Disable range: records still
// unflushed at Disable are dropped. Measured on the H200 (CUPTI 13.0, lazy
// patching): a module loaded before Enable is never instrumented, even if its
// kernels first run inside the range; the module must be loaded inside `work`.
#include "evaluator/profile/sass_counter.hpp"
#include "evaluator/profile/cupti_support.hpp"

#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

namespace ptxbench {
namespace {

constexpr const char* metric_name = "smsp__sass_inst_executed";

struct cupti_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) throw cupti_failure(profile_detail::cupti_message(r, what));
}

void initialize_profiler_once() { check(profile_detail::initialize_profiler_once(), "cuptiProfilerInitialize"); }

void check_device_supported(CUdevice device) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_SASS_METRICS;
  check(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported");
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  throw cupti_failure(profile_detail::unsupported_reason("CUPTI SASS metrics are", p));
}

uint64_t metric_id(uint32_t device_index) {
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = device_index;
  check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
  CUpti_SassMetrics_GetProperties_Params p{CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
  p.pChipName = chip.pChipName;
  p.pMetricName = metric_name;
  check(cuptiSassMetricsGetProperties(&p), "cuptiSassMetricsGetProperties(smsp__sass_inst_executed)");
  return p.metric.metricId;
}

// Collects and frees CUPTI's records. Must run inside the Enable/Disable range.
std::vector<sass_pc_count> flush(CUcontext context) {
  CUpti_SassMetricsGetDataProperties_Params props{CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
  props.ctx = context;
  check(cuptiSassMetricsGetDataProperties(&props), "cuptiSassMetricsGetDataProperties");
  std::vector<sass_pc_count> counts;
  if (props.numOfPatchedInstructionRecords == 0 || props.numOfInstances == 0) return counts;
  const size_t records = props.numOfPatchedInstructionRecords, instances = props.numOfInstances;
  std::vector<CUpti_SassMetrics_Data> data(records);
  std::vector<CUpti_SassMetrics_InstanceValue> values(records * instances);
  for (size_t i = 0; i < records; ++i) {
    data[i].structSize = sizeof(CUpti_SassMetrics_Data);
    data[i].pInstanceValues = &values[i * instances];
  }
  CUpti_SassMetricsFlushData_Params f{CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
  f.ctx = context;
  f.numOfPatchedInstructionRecords = records;
  f.numOfInstances = instances;
  f.pMetricsData = data.data();
  check(cuptiSassMetricsFlushData(&f), "cuptiSassMetricsFlushData");
  counts.reserve(records);
  for (size_t i = 0; i < records; ++i) {
    sass_pc_count c;
    c.function = data[i].functionName ? data[i].functionName : "";
    c.pc_offset = data[i].pcOffset;
    for (size_t k = 0; k < instances; ++k) c.executed += data[i].pInstanceValues[k].value;
    // CUPTI allocates the name for the caller (its own sample frees it the same way).
    std::free(const_cast<char*>(data[i].functionName));
    counts.push_back(std::move(c));
  }
  return counts;
}

// Pushes `context` for the duration of a call.
class context_scope {
 public:
  explicit context_scope(CUcontext c) {
    if (cuCtxPushCurrent(c) != CUDA_SUCCESS) throw cupti_failure("cuCtxPushCurrent failed");
  }
  ~context_scope() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  context_scope(const context_scope&) = delete;
  context_scope& operator=(const context_scope&) = delete;
};

// SetConfig once per device and keep it for the life of the process: on the
// H200 with CUPTI 13.0, SetConfig after an UnsetConfig failed with
// CUPTI_ERROR_OUT_OF_MEMORY, so the configuration is never unset; each call
// only opens and closes an Enable/Disable range.
void configure_device_once(uint32_t device_index) {
  static std::mutex mutex;
  static std::map<uint32_t, std::string> configured;  // device -> error ("" when configured)
  std::lock_guard<std::mutex> lock(mutex);
  auto it = configured.find(device_index);
  if (it == configured.end()) {
    std::string error;
    try {
      CUpti_SassMetrics_Config config{};
      config.metricId = metric_id(device_index);
      config.outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
      CUpti_SassMetricsSetConfig_Params set{CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
      set.numOfMetricConfig = 1;
      set.pConfigs = &config;
      set.deviceIndex = device_index;
      check(cuptiSassMetricsSetConfig(&set), "cuptiSassMetricsSetConfig");
    } catch (const cupti_failure& e) {
      error = e.what();
    }
    it = configured.emplace(device_index, error).first;
  }
  if (!it->second.empty()) throw cupti_failure(it->second);
}

}  // namespace

sass_count_result count_executed_sass(CUcontext context, const std::function<void()>& work) {
  sass_count_result r = count_executed_sass_segments(context, [&](const std::function<void()>&) { work(); });
  r.segments.clear();
  return r;
}

sass_count_result count_executed_sass_segments(CUcontext context,
                                               const std::function<void(const std::function<void()>& mark)>& work) {
  sass_count_result result;
  bool enabled = false;
  using clock = std::chrono::steady_clock;
  auto mark = clock::now();
  const auto lap = [&mark] {
    const auto now = clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - mark).count();
    mark = now;
    return ms;
  };
  try {
    context_scope scope(context);
    CUdevice device = 0;
    if (cuCtxGetDevice(&device) != CUDA_SUCCESS) throw cupti_failure("cuCtxGetDevice failed");
    initialize_profiler_once();
    check_device_supported(device);
    configure_device_once(static_cast<uint32_t>(device));
    CUpti_SassMetricsEnable_Params enable{CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
    enable.ctx = context;
    // Lazy patching is required: with it off, even a process's first pass
    // recorded nothing (H200, CUPTI 13.0, docs/gpu-runs.md 2026-12-03).
    enable.enableLazyPatching = 1;
    check(cuptiSassMetricsEnable(&enable), "cuptiSassMetricsEnable");
    enabled = true;
    result.setup_ms = lap();
    const auto mark_segment = [&] {
      if (cuCtxSynchronize() != CUDA_SUCCESS) throw cupti_failure("cuCtxSynchronize before a flush failed");
      result.segments.push_back(flush(context));
    };
    try {
      work(mark_segment);
    } catch (const cupti_failure&) {
      throw;
    } catch (const std::exception& e) {
      throw cupti_failure(std::string("the instrumented work failed: ") + e.what());
    }
    if (cuCtxSynchronize() != CUDA_SUCCESS) throw cupti_failure("cuCtxSynchronize after the instrumented work failed");
    result.work_ms = lap();
    result.segments.push_back(flush(context));
    for (const auto& segment : result.segments) result.counts.insert(result.counts.end(), segment.begin(), segment.end());
    result.ok = true;
    enabled = false;
    CUpti_SassMetricsDisable_Params disable{CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
    disable.ctx = context;
    check(cuptiSassMetricsDisable(&disable), "cuptiSassMetricsDisable");
    result.flush_ms = lap();
  } catch (const cupti_failure& e) {
    result.ok = false;
    result.error = e.what();
    result.counts.clear();
    result.segments.clear();
  }
  if (enabled) {  // close the range after a failure; its records are dropped
    CUpti_SassMetricsDisable_Params disable{CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
    disable.ctx = context;
    cuptiSassMetricsDisable(&disable);
  }
  if (result.ok && result.counts.empty()) {
    result.ok = false;
    result.error =
        "CUPTI recorded no instructions: no kernel was launched inside the instrumented work, its module was "
        "loaded before the pass (CUPTI instruments only modules loaded while the pass is on), or this process "
        "already ran an instrumented pass (seen with CUPTI 13.0 on the H200: only a process's first pass records)";
  }
  return result;
}

}  // namespace ptxbench
