#include "evaluator/profile/hw_host.hpp"
#include "evaluator/profile/cupti_support.hpp"

namespace ptxbench {
namespace profile_detail {

void check(CUptiResult r, const char* what, bool machine) {
  if (r == CUPTI_SUCCESS) return;
  throw hw_failure(cupti_message(r, what), machine || machine_cannot_profile(r));
}

host_object::host_object(const std::string& chip, const std::vector<uint8_t>& availability) {
  CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  check(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize", true);
  m_host = p.pHostObject;
}

host_object::~host_object() {
  CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  p.pHostObject = m_host;
  cuptiProfilerHostDeinitialize(&p);
}

std::vector<uint8_t> host_object::config(std::vector<const char*>& metrics) {
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = m_host;
  add.ppMetricNames = metrics.data();
  add.numMetrics = metrics.size();
  check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
  CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = m_host;
  check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  std::vector<uint8_t> image(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params get{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  get.pHostObject = m_host;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  check(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage");
  return image;
}

int passes_of(std::vector<uint8_t>& config) {
  CUpti_Profiler_Host_GetNumOfPasses_Params p{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  check(cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses");
  return int(p.numOfPasses);
}

}  // namespace profile_detail

int hardware_passes(const std::string& chip, const std::vector<std::string>& metrics, std::string& error) {
  using namespace profile_detail;
  try {
    host_object host(chip, {});
    std::vector<const char*> names;
    for (const auto& m : metrics) names.push_back(m.c_str());
    std::vector<uint8_t> config = host.config(names);
    return passes_of(config);
  } catch (const hw_failure& e) {
    error = e.what();
    return -1;
  }
}

}  // namespace ptxbench
