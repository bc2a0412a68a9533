#pragma once
// Device allocations of the worker. A guarded buffer has 64 KiB of a known
// byte pattern before and after the bytes the candidate may touch, checked
// after every run to catch out-of-bounds writes. Destructors never throw
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

class guarded_buffer {
 public:
  static constexpr size_t guard_bytes = 64 * 1024;
  static constexpr uint8_t guard_pattern = 0xA5;

  explicit guarded_buffer(size_t bytes);
  CUdeviceptr ptr() const { return m_memory.ptr() + guard_bytes; }
  size_t bytes() const { return m_bytes; }
  void arm_guards(CUstream stream);  // (re)writes the pattern on both sides
  // Bytes of the guards that no longer hold the pattern. Synchronises.
  int64_t damaged_guard_bytes(unsigned long long* scratch, CUstream stream) const;

 private:
  device_memory m_memory;
  size_t m_bytes;
};

}  // namespace ptxbench::gpu
