#include "tests/baselines/loop_kernel.hpp"

#include <string>

#include "tests/baselines/gpu_support.hpp"

namespace ptxbench::gpu_test {

const char* const loop_kernel_ptx = R"PTX(
.version 8.0
.target sm_90
.address_size 64

.visible .entry loop_kernel(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<4>;

  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.f32 %f1, 0f3F800000;
LOOP:
  .pragma "nounroll";
  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3C23D70A;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra LOOP;
  setp.eq.u32 %p2, %r1, 0xFFFFFFFF;
  @%p2 bra COLD;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %ntid.x;
  mad.lo.u32 %r6, %r4, %r5, %r3;
  mul.wide.u32 %rd2, %r6, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f1;
  ret;
COLD:
  st.global.f32 [%rd1], %f1;
  st.global.f32 [%rd1+4], %f1;
  st.global.f32 [%rd1+8], %f1;
  st.global.f32 [%rd1+12], %f1;
  st.global.f32 [%rd1+16], %f1;
  st.global.f32 [%rd1+20], %f1;
  st.global.f32 [%rd1+24], %f1;
  st.global.f32 [%rd1+28], %f1;
  ret;
}
)PTX";

std::vector<char> link_ptx(const std::string& ptx, const char* name) {
  CUlinkState link = nullptr;
  check(cuLinkCreate(0, nullptr, nullptr, &link), "cuLinkCreate");
  CUresult r = cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1, name, 0, nullptr,
                             nullptr);
  void* cubin = nullptr;
  size_t bytes = 0;
  if (r == CUDA_SUCCESS) r = cuLinkComplete(link, &cubin, &bytes);
  std::vector<char> out;
  if (r == CUDA_SUCCESS) out.assign(static_cast<char*>(cubin), static_cast<char*>(cubin) + bytes);
  cuLinkDestroy(link);
  check(r, (std::string("linking ") + name).c_str());
  return out;
}

std::vector<char> link_loop_kernel() { return link_ptx(loop_kernel_ptx, "loop_kernel.ptx"); }

loaded_loop_kernel load_loop_kernel(const std::vector<char>& cubin) {
  loaded_loop_kernel k;
  check(cuModuleLoadData(&k.module, cubin.data()), "cuModuleLoadData");
  check(cuModuleGetFunction(&k.function, k.module, loop_kernel_name), "cuModuleGetFunction");
  return k;
}

void launch_loop_kernel(const loaded_loop_kernel& k, CUstream stream, CUdeviceptr out, uint32_t n, unsigned blocks,
                        unsigned threads) {
  void* params[] = {&out, &n};
  check(cuLaunchKernel(k.function, blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
}

}  // namespace ptxbench::gpu_test

namespace ptxbench::gpu_test {

loop_count_classes classify_loop_counts(const sass_count_result& r, uint64_t once, uint64_t body) {
  loop_count_classes c;
  for (const auto& pc : r.counts) {
    ++c.pcs;
    if (pc.function != loop_kernel_name) c.names_match = false;
    if (pc.pc_offset % 16 != 0) c.offsets_aligned = false;
    if (pc.executed == body)
      ++c.body_pcs;
    else if (pc.executed == once)
      ++c.once_pcs;
    else if (pc.executed == 0)
      ++c.zero_pcs;
    else {
      if (c.other_pcs++ == 0) c.other = std::to_string(pc.pc_offset) + ":" + std::to_string(pc.executed);
    }
  }
  return c;
}

std::string loop_count_classes::summary() const {
  return std::to_string(pcs) + " PCs: " + std::to_string(body_pcs) + " in the loop, " + std::to_string(once_pcs) +
         " once per warp, " + std::to_string(zero_pcs) + " never, " + std::to_string(other_pcs) + " unexpected" +
         (other.empty() ? "" : " (first " + other + ")") + (offsets_aligned ? "" : ", misaligned PC") +
         (names_match ? "" : ", wrong function name");
}

}  // namespace ptxbench::gpu_test
