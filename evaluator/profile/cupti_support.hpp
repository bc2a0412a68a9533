// What the three CUPTI users (hw_counter: range profiling; sass_counter: SASS
// metrics; pc_sampling) share: the text of a failed call, which results mean
// the machine cannot profile, the profiler's one initialisation per process,
// and why CUPTI refuses a profiling API on a device.
#pragma once

#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include <mutex>
#include <string>

namespace ptxbench::profile_detail {

// "`what`: CUPTI's text for `r`", and the cause where CUPTI's text does not say it.
inline std::string cupti_message(CUptiResult r, const char* what) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::string msg = std::string(what) + ": " + (text ? text : "CUPTI error " + std::to_string(r));
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    msg += " (GPU performance counters are restricted to admin users on this machine: NVreg_RestrictProfilingToAdminUsers)";
  return msg;
}

// Results that say this machine (its driver, its settings, another profiling
// client) cannot profile, whatever the profiled work does: never the work's fault.
inline bool machine_cannot_profile(CUptiResult r) {
  return r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_INITIALIZED ||
         r == CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED || r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
         r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED || r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
}

// cuptiProfilerInitialize, once per process for both profilers; its result on every call.
inline CUptiResult initialize_profiler_once() {
  static std::once_flag once;
  static CUptiResult status = CUPTI_SUCCESS;
  std::call_once(once, [] {
    CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    status = cuptiProfilerInitialize(&p);
  });
  return status;
}

// `what` and the list of configuration checks the device failed, e.g.
// "CUPTI SASS metrics are not supported on this device: vGPU profiling disabled or unsupported;".
inline std::string unsupported_reason(const char* what, const CUpti_Profiler_DeviceSupported_Params& p) {
  std::string why = std::string(what) + " not supported on this device:";
  if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " architecture;";
  if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " vGPU profiling disabled or unsupported;";
  if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " confidential compute;";
  if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " SLI;";
  if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " CMP device;";
  if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " WSL;";
  return why;
}

}  // namespace ptxbench::profile_detail
