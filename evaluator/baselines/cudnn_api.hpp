#pragma once
// cuDNN opened at run time. The worker must start on machines without cuDNN,
// so nothing links libcudnn: the few entry points the backend graph API needs
// are looked up with dlsym. Search order: $PTXBENCH_CUDNN_LIBRARY (a full
// path), then libcudnn.so.9 and libcudnn.so through the loader's usual path.
#include <cudnn_graph.h>

#include <stdexcept>
#include <string>

namespace ptxbench::cudnn {

struct api {
  bool loaded = false;
  std::string error;    // why loading failed
  std::string library;  // what was opened
  size_t version = 0;   // cudnnGetVersion(), e.g. 91900

  size_t (*get_version)() = nullptr;
  const char* (*get_error_string)(cudnnStatus_t) = nullptr;
  void (*get_last_error_string)(char*, size_t) = nullptr;
  cudnnStatus_t (*create)(cudnnHandle_t*) = nullptr;
  cudnnStatus_t (*destroy)(cudnnHandle_t) = nullptr;
  cudnnStatus_t (*set_stream)(cudnnHandle_t, cudaStream_t) = nullptr;
  cudnnStatus_t (*backend_create)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t*) = nullptr;
  cudnnStatus_t (*backend_destroy)(cudnnBackendDescriptor_t) = nullptr;
  cudnnStatus_t (*backend_finalize)(cudnnBackendDescriptor_t) = nullptr;
  cudnnStatus_t (*backend_set)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t, cudnnBackendAttributeType_t,
                               int64_t, const void*) = nullptr;
  cudnnStatus_t (*backend_get)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t,
                               cudnnBackendAttributeType_t, int64_t, int64_t*, void*) = nullptr;
  cudnnStatus_t (*backend_execute)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t) = nullptr;
};

// Loads cuDNN once per process (thread-safe) and returns the table; check `loaded`.
const api& load();

// "9.19.0" from a cudnnGetVersion() number.
std::string version_string(size_t version);

struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws cudnn::error "<what>: CUDNN_STATUS_... (last error message)" unless s is success.
void check(cudnnStatus_t s, const std::string& what);

}  // namespace ptxbench::cudnn
