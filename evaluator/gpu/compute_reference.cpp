// Every output's fp32 reference of a task at a size: dispatch on the task's
// reference, and attention backward's derived inputs (O, LSE).
#include <stdexcept>

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/reference_compute.hpp"

namespace ptxbench::gpu {
namespace {

const tensor_spec& need(const task& t, const std::string& name) {
  const tensor_spec* s = t.find_tensor(name);
  if (!s) throw std::runtime_error("task " + t.id + " has no tensor " + name + " needed by its reference");
  return *s;
}

device_memory upcast(const reference_env& env, CUdeviceptr p, dtype t, int64_t n) {
  device_memory f(size_t(n) * 4);
  upcast_to_f32(p, to_elem(t), n, f.as<float>(), env.stream);
  return f;
}

}  // namespace

void compute_reference(const reference_env& env, const task& t, const size_point& sz,
                       const std::map<std::string, CUdeviceptr>& tensors, reference_set& out) {
  if (t.reference == "gemm") {
    const gemm_plan p = plan_gemm(t, sz);
    out.outputs.emplace(p.output, gemm_reference(env, t, p, tensors));
    PTXB_CU(cuStreamSynchronize(env.stream));
    return;
  }
  const bool fwd = t.reference == "attention_fwd", bwd = t.reference == "attention_bwd";
  if (!fwd && !bwd) throw std::runtime_error("unknown reference '" + t.reference + "' in task " + t.id);
  const attention_plan p = plan_attention(t, sz);
  const attention_inputs in = upcast_attention_inputs(env, t, p, tensors);
  attention_forward_result f = attention_forward_reference(env, p, in);
  if (fwd) {
    PTXB_CU(cuStreamSynchronize(env.stream));
    out.outputs.emplace("O", std::move(f.o));
    out.outputs.emplace("LSE", std::move(f.lse));
    return;
  }
  // Backward: O (as the dtype the candidate sees) and LSE become inputs.
  const tensor_spec& o_spec = need(t, "O");
  downcast_from_f32(f.o.as<float>(), p.q_elements, to_elem(o_spec.type), tensors.at("O"), env.stream);
  PTXB_CU(cuMemcpyDtoDAsync(tensors.at("LSE"), f.lse.ptr(), f.lse.bytes(), env.stream));
  device_memory o_in(size_t(p.q_elements) * dtype_bytes(o_spec.type)), lse_in(f.lse.bytes());
  PTXB_CU(cuMemcpyDtoDAsync(o_in.ptr(), tensors.at("O"), o_in.bytes(), env.stream));
  PTXB_CU(cuMemcpyDtoDAsync(lse_in.ptr(), f.lse.ptr(), f.lse.bytes(), env.stream));
  auto o_seen = upcast(env, tensors.at("O"), o_spec.type, p.q_elements);
  auto d_o = upcast(env, tensors.at("dO"), need(t, "dO").type, p.q_elements);
  attention_backward_result g =
      attention_backward_reference(env, p, in, o_seen.as<float>(), d_o.as<float>(), f.lse.as<float>());
  PTXB_CU(cuStreamSynchronize(env.stream));
  out.derived_inputs.emplace("O", std::move(o_in));
  out.derived_inputs.emplace("LSE", std::move(lse_in));
  out.outputs.emplace("dQ", std::move(g.dq));
  out.outputs.emplace("dK", std::move(g.dk));
  out.outputs.emplace("dV", std::move(g.dv));
}

}  // namespace ptxbench::gpu
