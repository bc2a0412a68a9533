#pragma once
// What a worker keeps for its whole life: device, context, stream, cuBLAS,
// the measured peak rates, an L2 flush buffer, and a channel for progress
// messages to the supervisor (each one re-arms its watchdog).
#include <cublas_v2.h>
#include <cuda.h>

#include <functional>
#include <string>

#include "evaluator/gpu/device_memory.hpp"
#include "evaluator/gpu/launcher.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench::gpu {

struct worker_state {
  int ordinal = 0;
  CUdevice device = 0;
  bool driver_ready = false;  // init_driver ran
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  cublasHandle_t blas = nullptr;
  device_limits limits;
  protocol::worker_hello hello;
  device_memory l2_flush;         // written before every timed sample
  device_memory scratch8;         // 8 bytes for reductions
  std::function<void(const protocol::worker_progress&)> progress;
  // Asks the supervisor for the GPU before timing and blocks until it answers
  // (no other process of ours runs on this GPU while samples are taken). A
  // counting pass asks the same way before each part that uses the GPU
  // (the supervisor then holds the GPU shared for it) ...
  std::function<void()> await_go;
  // ... and says when a part is over (CUPTI's set-up, between the two, uses
  // no GPU and may run while another job times).
  std::function<void()> gpu_idle;

  void report(const std::string& what, double limit_ms, int launch = -1, const std::string& size = "") const {
    if (progress) progress({what, limit_ms, launch, size});
  }
};

// The driver part of a start: cuInit and the device handle. No context is
// made and nothing runs on the GPU, so a worker can do this (and load its
// libraries) while another process is timing on the same GPU.
void init_driver(worker_state& w, int ordinal);
// Creates the context (the device's primary context), the stream and cuBLAS,
// and measures peak bf16 GEMM rate and copy bandwidth. Throws cuda_error.
// known_peak_tflops / known_copy_gbps > 0: rates measured by an earlier worker
// on this GPU, used instead of measuring again.
void init_worker(worker_state& w, int ordinal, double known_peak_tflops = 0, double known_copy_gbps = 0);
// Runs the reference GEMMs' cuBLAS kernels once (a spare does, before it says
// hello), so its counting pass does not pay for their first use.
void warm_reference_gemms(worker_state& w);

}  // namespace ptxbench::gpu
