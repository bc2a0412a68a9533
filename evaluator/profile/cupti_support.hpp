// Why CUPTI refuses a profiling API on a device, for both counters
// (hw_counter: range profiling; sass_counter: SASS metrics).
#pragma once

#include <cupti_profiler_target.h>

#include <string>

namespace ptxbench::profile_detail {

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
