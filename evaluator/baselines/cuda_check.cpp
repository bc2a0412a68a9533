#include "evaluator/baselines/cuda_check.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace ptxbench::baselines_detail {

void check_cu(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  throw cuda_error(std::string(what) + ": " + (name ? name : "CUDA error " + std::to_string(r)) +
                       (text ? std::string(" (") + text + ")" : std::string()),
                   int(r));
}

device_buffer::device_buffer(size_t bytes) : m_bytes(bytes) {
  if (bytes > 0) check_cu(cuMemAlloc(&m_ptr, bytes), "cuMemAlloc");
}

device_buffer::~device_buffer() {
  if (m_ptr) cuMemFree(m_ptr);
}

device_buffer::device_buffer(device_buffer&& o) noexcept
    : m_ptr(std::exchange(o.m_ptr, 0)), m_bytes(std::exchange(o.m_bytes, 0)) {}

device_buffer& device_buffer::operator=(device_buffer&& o) noexcept {
  if (this != &o) {
    if (m_ptr) cuMemFree(m_ptr);
    m_ptr = std::exchange(o.m_ptr, 0);
    m_bytes = std::exchange(o.m_bytes, 0);
  }
  return *this;
}

namespace {
struct event_pair {
  CUevent start = nullptr;
  CUevent stop = nullptr;
  event_pair() {
    check_cu(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    check_cu(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~event_pair() {
    cuEventDestroy(start);
    cuEventDestroy(stop);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
};
}  // namespace

double median_time_ms(CUstream stream, const std::function<void()>& launch, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<event_pair> events(static_cast<size_t>(reps));
  for (auto& e : events) {
    check_cu(cuEventRecord(e.start, stream), "cuEventRecord");
    launch();
    check_cu(cuEventRecord(e.stop, stream), "cuEventRecord");
  }
  check_cu(cuStreamSynchronize(stream), "cuStreamSynchronize");
  std::vector<double> times;
  for (auto& e : events) {
    float ms = 0.0f;
    check_cu(cuEventElapsedTime(&ms, e.start, e.stop), "cuEventElapsedTime");
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace ptxbench::baselines_detail
