// A stand-in libcuda.so.1 for one unit test: cuInit succeeds and one device
// is found, so the machine looks like a GPU machine, while every other driver
// call is missing, so the evaluator's GPU worker cannot start. The GPU tests
// must then fail, not skip (tests/gpu/gpu_fixture.hpp, require_gpu).
extern "C" {
int cuInit(unsigned) { return 0; }
int cuDeviceGetCount(int* count) {
  *count = 1;
  return 0;
}
}
