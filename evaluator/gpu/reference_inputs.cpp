// The inputs of a task at a size and seed: seeded draws from each input's
// distribution, and the index inputs, which are fixed functions of the sizes.
#include <stdexcept>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/index_inputs.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/reference_compute.hpp"

namespace ptxbench::gpu {
namespace {

// Writes an index input (group offsets, cu_seqlens): the same for every seed,
// from evaluator/api/index_inputs.hpp. Synchronises the stream.
void write_index_input(const reference_env& env, const task& t, const tensor_spec& ts, const size_point& s,
                       CUdeviceptr at) {
  const bool groups = ts.init.kind == input_distribution::shape::group_offsets;
  const char* a = groups ? "G" : "B";
  const char* b = groups ? "M" : "S";
  if (!s.values.count(a) || !s.values.count(b))
    throw std::runtime_error("task " + t.id + ": tensor " + ts.name + " (" + (groups ? "group_offsets" : "cu_seqlens") +
                             ") needs sizes " + a + " and " + b);
  const std::vector<int32_t> v = groups ? group_offsets(s.values.at(a), s.values.at(b))
                                        : varlen_cu_seqlens(s.values.at(a), s.values.at(b));
  if (ts.type != dtype::i32 || tensor_elements(ts, s) != int64_t(v.size()))
    throw std::runtime_error("task " + t.id + ": tensor " + ts.name + " must be i32 of " + std::to_string(v.size()) +
                             " elements (" + a + "+1) at " + describe_size(s));
  PTXB_CU(cuMemcpyHtoDAsync(at, v.data(), v.size() * sizeof(int32_t), env.stream));
  PTXB_CU(cuStreamSynchronize(env.stream));  // v is freed on return
}

}  // namespace

void write_inputs(const reference_env& env, const task& t, const size_point& s, uint64_t seed,
                  const std::map<std::string, CUdeviceptr>& tensors) {
  bool bwd = t.reference == "attention_bwd";
  for (size_t i = 0; i < t.tensors.size(); ++i) {
    const tensor_spec& ts = t.tensors[i];
    if (ts.role != tensor_role::input) continue;
    if (bwd && (ts.name == "O" || ts.name == "LSE")) continue;
    if (ts.init.kind == input_distribution::shape::group_offsets ||
        ts.init.kind == input_distribution::shape::cu_seqlens) {
      write_index_input(env, t, ts, s, tensors.at(ts.name));
      continue;
    }
    fill_spec f;
    f.normal = ts.init.kind == input_distribution::shape::normal;
    f.scale = float(ts.init.scale);
    f.row_scale_min = float(ts.init.row_scale_min);
    f.row_scale_max = float(ts.init.row_scale_max);
    f.spike_every = ts.init.spike_every;
    f.spike_scale = float(ts.init.spike_scale);
    f.row_len = ts.shape.empty() ? 1 : eval_int(ts.shape.back(), s.values);
    fill_distribution(tensors.at(ts.name), to_elem(ts.type), tensor_elements(ts, s), f, seed, i + 1, env.stream);
  }
}

}  // namespace ptxbench::gpu
