#include "evaluator/gpu/worker_state.hpp"

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/kernels.hpp"

namespace ptxbench::gpu {
namespace {

// Times `reps` runs of `work` on the stream after `warm` untimed ones (ms per run).
template <typename F>
double time_per_run(worker_state& w, int warm, int reps, F&& work) {
  for (int i = 0; i < warm; ++i) work();
  CUevent a, b;
  PTXB_CU(cuEventCreate(&a, CU_EVENT_DEFAULT));
  PTXB_CU(cuEventCreate(&b, CU_EVENT_DEFAULT));
  PTXB_CU(cuEventRecord(a, w.stream));
  for (int i = 0; i < reps; ++i) work();
  PTXB_CU(cuEventRecord(b, w.stream));
  PTXB_CU(cuEventSynchronize(b));
  float ms = 0.f;
  PTXB_CU(cuEventElapsedTime(&ms, a, b));
  cuEventDestroy(a);
  cuEventDestroy(b);
  return double(ms) / reps;
}

// Peak bf16 rate: an 8192^3 GEMM through cuBLAS (cuBLASLt underneath) on random data.
double measure_peak_tflops(worker_state& w) {
  const int n = 8192;
  device_memory a(size_t(n) * n * 2), b(size_t(n) * n * 2), c(size_t(n) * n * 2);
  fill_uniform(a.ptr(), elem::bf16, int64_t(n) * n, 11, 1, w.stream);
  fill_uniform(b.ptr(), elem::bf16, int64_t(n) * n, 12, 2, w.stream);
  PTXB_CUBLAS(cublasSetMathMode(w.blas, CUBLAS_DEFAULT_MATH));
  float alpha = 1.f, beta = 0.f;
  auto gemm = [&] {
    PTXB_CUBLAS(cublasGemmEx(w.blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, b.as<void>(), CUDA_R_16BF, n,
                             a.as<void>(), CUDA_R_16BF, n, &beta, c.as<void>(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT));
  };
  double ms = time_per_run(w, 3, 10, gemm);
  PTXB_CUBLAS(cublasSetMathMode(w.blas, CUBLAS_PEDANTIC_MATH));
  return 2.0 * double(n) * n * n / (ms * 1e9);
}

// Device-to-device copy, counting bytes read and written.
double measure_copy_gbps(worker_state& w) {
  const size_t bytes = size_t(1) << 30;
  device_memory src(bytes), dst(bytes);
  PTXB_CU(cuMemsetD8Async(src.ptr(), 1, bytes, w.stream));
  double ms = time_per_run(w, 2, 10, [&] { PTXB_CU(cuMemcpyDtoDAsync(dst.ptr(), src.ptr(), bytes, w.stream)); });
  return 2.0 * double(bytes) / (ms * 1e6);
}

}  // namespace

void init_driver(worker_state& w, int ordinal) {
  w.ordinal = ordinal;
  PTXB_CU(cuInit(0));
  int count = 0;
  PTXB_CU(cuDeviceGetCount(&count));
  if (ordinal >= count)
    throw cuda_error("device " + std::to_string(ordinal) + " requested but " + std::to_string(count) + " visible",
                     CUDA_ERROR_INVALID_DEVICE, false);
  PTXB_CU(cuDeviceGet(&w.device, ordinal));
  w.hello.device_count = count;
  w.driver_ready = true;
}

void init_worker(worker_state& w, int ordinal, double known_peak_tflops, double known_copy_gbps) {
  if (!w.driver_ready || w.ordinal != ordinal) init_driver(w, ordinal);
  const int count = w.hello.device_count;
  PTXB_CU(cuDevicePrimaryCtxRetain(&w.context, w.device));
  PTXB_CU(cuCtxSetCurrent(w.context));
  PTXB_CUDA(cudaSetDevice(ordinal));
  PTXB_CU(cuStreamCreate(&w.stream, CU_STREAM_NON_BLOCKING));
  PTXB_CUBLAS(cublasCreate(&w.blas));
  PTXB_CUBLAS(cublasSetStream(w.blas, w.stream));
  PTXB_CUBLAS(cublasSetMathMode(w.blas, CUBLAS_PEDANTIC_MATH));
  w.limits = query_limits(w.device);

  char name[256] = {0};
  PTXB_CU(cuDeviceGetName(name, sizeof name, w.device));
  int major = 0, minor = 0, sms = 0, l2 = 0;
  PTXB_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, w.device));
  PTXB_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, w.device));
  PTXB_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, w.device));
  PTXB_CU(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, w.device));
  w.hello.device = ordinal;
  w.hello.device_count = count;
  w.hello.name = name;
  w.hello.arch = "sm_" + std::to_string(major * 10 + minor);
  w.hello.sm_count = sms;
  w.hello.l2_bytes = l2;
  w.l2_flush = device_memory(size_t(l2) * 2);
  w.scratch8 = device_memory(8);
  w.hello.peak_tflops = known_peak_tflops > 0 ? known_peak_tflops : measure_peak_tflops(w);
  w.hello.copy_gbps = known_copy_gbps > 0 ? known_copy_gbps : measure_copy_gbps(w);
}

void warm_reference_gemms(worker_state& w) {
  // The references' fp32 GEMMs, in every transpose combination, at a small
  // and a large shape: cuBLAS picks (and the driver loads, lazily) its kernels
  // on first use, ~100 ms that a counting pass otherwise spends computing
  // its reference. No module of a candidate is involved, and the profiler is
  // not touched (see main.cpp).
  const int sizes[] = {256, 2048};
  device_memory a(size_t(2048) * 2048 * 4), b(size_t(2048) * 2048 * 4), c(size_t(2048) * 2048 * 4);
  const float alpha = 1.f, beta = 0.f;
  for (int n : sizes)
    for (cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T})
      for (cublasOperation_t tb : {CUBLAS_OP_N, CUBLAS_OP_T})
        PTXB_CUBLAS(cublasSgemmStridedBatched(w.blas, ta, tb, n, n, n, &alpha, a.as<float>(), n, 0, b.as<float>(), n, 0,
                                              &beta, c.as<float>(), n, 0, 1));
  PTXB_CU(cuStreamSynchronize(w.stream));
}

}  // namespace ptxbench::gpu
