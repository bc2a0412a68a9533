#pragma once
// Turns a manifest into launches of the candidate's module at one size:
// parameter layout checked with cuFuncGetParamInfo, tensor maps encoded with
// cuTensorMapEncodeTiled, dynamic shared memory and cluster attributes set.
// A launch that cannot run on this GPU (too much shared memory, block too
// large, unschedulable cluster, parameter mismatch) is refused with a reason
// written for the model, before anything runs.
#include <cuda.h>

#include <map>
#include <string>
#include <vector>

#include "evaluator/api/manifest.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench::gpu {

struct param_storage {
  alignas(64) unsigned char bytes[128];
};

struct prepared_launch {
  std::string kernel;
  CUfunction function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned cluster[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<param_storage> storage;
  std::vector<void*> args;
};

struct launch_plan {
  std::vector<prepared_launch> launches;
  std::string refusal;  // non-empty: nothing may run; the reason
};

struct device_limits {
  int max_shared_optin = 0;  // bytes of shared memory one block may opt into
  int max_threads_per_block = 1024;
};
device_limits query_limits(CUdevice device);

// `buffers`: device address of every task tensor and scratch buffer by name.
launch_plan prepare_launches(CUmodule module, const manifest& m, const task& t, const size_point& s,
                             const std::map<std::string, CUdeviceptr>& buffers, const device_limits& limits);

// Enqueues one launch on `stream`; returns the driver's answer.
CUresult enqueue(prepared_launch& l, CUstream stream);

// "M=4096 N=4096 K=4096"
std::string size_text(const size_point& s);

}  // namespace ptxbench::gpu
