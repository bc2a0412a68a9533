#pragma once
// Driver-API helpers shared by the baselines: error checks that throw (a
// baseline that cannot be set up is infrastructure, turned into
// available()=false by its factory), an owning device buffer, and event timing.
#include <cuda.h>

#include <cstddef>
#include <functional>
#include <string>

#include "evaluator/common/cuda_error.hpp"

namespace ptxbench::baselines_detail {

using ptxbench::cuda_error;  // evaluator/common/cuda_error.hpp

// Throws cuda_error "<what>: CUDA_ERROR_NAME (description)" unless r is CUDA_SUCCESS.
void check_cu(CUresult r, const char* what);

// Device memory owned by one baseline. Freed without throwing.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(size_t bytes);
  ~device_buffer();
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept;
  device_buffer& operator=(device_buffer&& o) noexcept;

  CUdeviceptr get() const { return m_ptr; }
  void* ptr() const { return reinterpret_cast<void*>(m_ptr); }
  size_t bytes() const { return m_bytes; }

 private:
  CUdeviceptr m_ptr = 0;
  size_t m_bytes = 0;
};

// Median time in ms of `reps` runs of `launch` on `stream`, each bracketed by
// its own pair of events, after `warmup` untimed runs. Synchronises the stream.
double median_time_ms(CUstream stream, const std::function<void()>& launch, int warmup, int reps);

}  // namespace ptxbench::baselines_detail
