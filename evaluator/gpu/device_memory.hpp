#pragma once
// Device allocations of the worker. A guarded buffer has a known byte pattern
// before (64 KiB) and after (64 KiB up to the end of its own mapping) the bytes
// the candidate may touch, re-armed before and checked after every run. Destructors never throw
// (after a sticky error the frees fail; the worker exits anyway).
#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace ptxbench::gpu {

class device_memory {
 public:
  device_memory() = default;
  explicit device_memory(size_t bytes);
  ~device_memory();
  device_memory(device_memory&& o) noexcept;
  device_memory& operator=(device_memory&& o) noexcept;
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  CUdeviceptr ptr() const { return m_ptr; }
  size_t bytes() const { return m_bytes; }
  template <typename T>
  T* as() const { return reinterpret_cast<T*>(m_ptr); }

 private:
  CUdeviceptr m_ptr = 0;
  size_t m_bytes = 0;
};

// The candidate's buffers. Each is its own physical allocation mapped
// (cuMemCreate/cuMemMap) into the middle of a reserved address range whose
// first and last granule stay unmapped, so the mapping holds nothing but:
//   [64 KiB front guard][the candidate's bytes][rear guard to the mapping's end]
// The rear guard takes all the slack of the granularity (2 MiB on Hopper), so
// every byte a stray write can reach without faulting is guard: re-armed
// before and checked after every run. A write past the mapping faults (an
// illegal address: the candidate's runtime failure). Nothing of the mapping is
// shared with another buffer or the evaluator's own data, as cuMemAlloc's
// sub-allocation and rounding could.
class guarded_buffer {
 public:
  static constexpr size_t guard_bytes = 64 * 1024;
  static constexpr uint8_t guard_pattern = 0xA5;

  // Throws cuda_error when the allocation fails (non-sticky: CUDA_ERROR_OUT_OF_MEMORY...).
  explicit guarded_buffer(size_t bytes);
  ~guarded_buffer();
  guarded_buffer(const guarded_buffer&) = delete;
  guarded_buffer& operator=(const guarded_buffer&) = delete;
  CUdeviceptr ptr() const { return m_mapped + guard_bytes; }
  size_t bytes() const { return m_bytes; }
  size_t rear_guard_bytes() const { return m_mapped_bytes - guard_bytes - m_bytes; }
  void arm_guards(CUstream stream);  // (re)writes the pattern on both sides
  // Bytes of the guards that no longer hold the pattern. Synchronises.
  int64_t damaged_guard_bytes(unsigned long long* scratch, CUstream stream) const;

 private:
  CUdeviceptr m_reserved = 0, m_mapped = 0;
  size_t m_reserved_bytes = 0, m_mapped_bytes = 0, m_bytes;
  CUmemGenericAllocationHandle m_handle = 0;
  bool m_has_handle = false, m_is_mapped = false;
  void release() noexcept;
};

}  // namespace ptxbench::gpu
