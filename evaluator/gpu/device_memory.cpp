#include "evaluator/gpu/device_memory.hpp"

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/kernels.hpp"

namespace ptxbench::gpu {

device_memory::device_memory(size_t bytes) : m_bytes(bytes) {
  if (bytes) PTXB_CU(cuMemAlloc(&m_ptr, bytes));
}

device_memory::~device_memory() {
  if (m_ptr) cuMemFree(m_ptr);
}

device_memory::device_memory(device_memory&& o) noexcept : m_ptr(o.m_ptr), m_bytes(o.m_bytes) {
  o.m_ptr = 0;
  o.m_bytes = 0;
}

device_memory& device_memory::operator=(device_memory&& o) noexcept {
  if (this != &o) {
    if (m_ptr) cuMemFree(m_ptr);
    m_ptr = o.m_ptr;
    m_bytes = o.m_bytes;
    o.m_ptr = 0;
    o.m_bytes = 0;
  }
  return *this;
}

// The candidate's region is padded to 256 bytes so the rear guard starts aligned.
guarded_buffer::guarded_buffer(size_t bytes)
    : m_memory(2 * guard_bytes + ((bytes + 255) / 256) * 256), m_bytes(bytes) {}

void guarded_buffer::arm_guards(CUstream stream) {
  PTXB_CU(cuMemsetD8Async(m_memory.ptr(), guard_pattern, guard_bytes, stream));
  PTXB_CU(cuMemsetD8Async(ptr() + m_bytes, guard_pattern, m_memory.bytes() - guard_bytes - m_bytes, stream));
}

int64_t guarded_buffer::damaged_guard_bytes(unsigned long long* scratch, CUstream stream) const {
  int64_t front = count_bytes_not(m_memory.ptr(), guard_bytes, guard_pattern, scratch, stream);
  int64_t back = count_bytes_not(ptr() + m_bytes, int64_t(m_memory.bytes() - guard_bytes - m_bytes), guard_pattern,
                                 scratch, stream);
  return front + back;
}

}  // namespace ptxbench::gpu
