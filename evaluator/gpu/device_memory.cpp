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

namespace {
size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }
}  // namespace

guarded_buffer::guarded_buffer(size_t bytes) : m_bytes(bytes) {
  CUdevice device = 0;
  PTXB_CU(cuCtxGetDevice(&device));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t granularity = 0;
  PTXB_CU(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  // At least 64 KiB of rear guard after the candidate's bytes (padded to 256).
  m_mapped_bytes = round_up(2 * guard_bytes + round_up(bytes, 256), granularity);
  m_reserved_bytes = m_mapped_bytes + 2 * granularity;
  try {
    PTXB_CU(cuMemAddressReserve(&m_reserved, m_reserved_bytes, granularity, 0, 0));
    PTXB_CU(cuMemCreate(&m_handle, m_mapped_bytes, &prop, 0));
    m_has_handle = true;
    m_mapped = m_reserved + granularity;
    PTXB_CU(cuMemMap(m_mapped, m_mapped_bytes, 0, m_handle, 0));
    m_is_mapped = true;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    PTXB_CU(cuMemSetAccess(m_mapped, m_mapped_bytes, &access, 1));
  } catch (...) {
    release();
    throw;
  }
}

guarded_buffer::~guarded_buffer() { release(); }

void guarded_buffer::release() noexcept {
  if (m_is_mapped) cuMemUnmap(m_mapped, m_mapped_bytes);
  if (m_has_handle) cuMemRelease(m_handle);
  if (m_reserved) cuMemAddressFree(m_reserved, m_reserved_bytes);
  m_is_mapped = m_has_handle = false;
  m_reserved = 0;
}

void guarded_buffer::arm_guards(CUstream stream) {
  PTXB_CU(cuMemsetD8Async(m_mapped, guard_pattern, guard_bytes, stream));
  PTXB_CU(cuMemsetD8Async(ptr() + m_bytes, guard_pattern, rear_guard_bytes(), stream));
}

int64_t guarded_buffer::damaged_guard_bytes(unsigned long long* scratch, CUstream stream) const {
  int64_t front = count_bytes_not(m_mapped, guard_bytes, guard_pattern, scratch, stream);
  int64_t back = count_bytes_not(ptr() + m_bytes, int64_t(rear_guard_bytes()), guard_pattern, scratch, stream);
  return front + back;
}

}  // namespace ptxbench::gpu
