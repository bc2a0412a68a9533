#pragma once
// The host side of CUPTI's range profiler: a chip's metric names scheduled into
// counter passes. It needs no GPU and no driver (only libcupti and its
// libnvperf_host), so the names the evaluator asks for are checked on any
// machine (tests/profile_host).
#include <cupti_profiler_host.h>
#include <cupti_result.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ptxbench {

// Counter passes the metrics need on `chip` ("GH100"), or -1 with CUPTI's words
// in `error` (an unknown metric name: CUPTI_ERROR_INVALID_PARAMETER).
int hardware_passes(const std::string& chip, const std::vector<std::string>& metrics, std::string& error);

namespace profile_detail {

struct hw_failure : std::runtime_error {
  hw_failure(const std::string& what, bool machine) : std::runtime_error(what), machine(machine) {}
  bool machine;  // the machine cannot count (as opposed to a failure during the counted work)
};

// Throws hw_failure naming `what` and CUPTI's result when `r` is not success.
void check(CUptiResult r, const char* what, bool machine = false);

// The host object of a chip, deinitialised when it goes. Without a counter
// availability image CUPTI schedules every counter as available (see
// count_hardware for why none is passed).
class host_object {
 public:
  host_object(const std::string& chip, const std::vector<uint8_t>& availability);
  ~host_object();
  host_object(const host_object&) = delete;
  host_object& operator=(const host_object&) = delete;
  CUpti_Profiler_Host_Object* get() const { return m_host; }

  // The config image of `metrics` (their counter passes scheduled).
  std::vector<uint8_t> config(std::vector<const char*>& metrics);

 private:
  CUpti_Profiler_Host_Object* m_host = nullptr;
};

int passes_of(std::vector<uint8_t>& config);

}  // namespace profile_detail
}  // namespace ptxbench
