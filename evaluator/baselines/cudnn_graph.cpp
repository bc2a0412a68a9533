#include "evaluator/baselines/cudnn_graph.hpp"

#include <stdexcept>
#include <utility>

#include "evaluator/baselines/cudnn_api.hpp"

// CUDNN_ATTR_OPERATIONGRAPH_HANDLE and CUDNN_ATTR_EXECUTION_PLAN_HANDLE are
// marked deprecated in cuDNN 9 headers but remain how a graph and a plan are
// tied to a handle (the device-property route is newer than some cuDNN 9.x).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace ptxbench::cudnn {

descriptor::descriptor(cudnnBackendDescriptorType_t type) {
  check(load().backend_create(type, &m_desc), "cudnnBackendCreateDescriptor(" + std::to_string(type) + ")");
}

descriptor::~descriptor() {
  if (m_desc) load().backend_destroy(m_desc);
}

descriptor::descriptor(descriptor&& o) noexcept : m_desc(std::exchange(o.m_desc, nullptr)) {}

descriptor& descriptor::operator=(descriptor&& o) noexcept {
  if (this != &o) {
    if (m_desc) load().backend_destroy(m_desc);
    m_desc = std::exchange(o.m_desc, nullptr);
  }
  return *this;
}

descriptor& descriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                            const void* values, const char* what) {
  check(load().backend_set(m_desc, name, type, count, values), std::string("set ") + what);
  return *this;
}

void descriptor::finalize(const std::string& what) { check(load().backend_finalize(m_desc), "finalize " + what); }

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

int64_t graph::tensor(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, cudnnDataType_t type,
                      tensor_options options) {
  const int64_t uid = m_next_uid++;
  descriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t alignment = 16;
  const bool is_virtual = options.is_virtual, by_value = options.by_value;
  d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor data type")
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()), dims.data(),
           "tensor dims")
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()), strides.data(),
           "tensor strides")
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor uid")
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, "tensor alignment")
      .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, "tensor is_virtual");
  if (by_value) d.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, "tensor by_value");
  if (options.ragged_offset >= 0) {
    cudnnBackendDescriptor_t raw = find(options.ragged_offset).get();
    d.set(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "tensor ragged offset");
  }
  if (options.reorder_f16x16) {
    const cudnnBackendTensorReordering_t mode = CUDNN_TENSOR_REORDERING_F16x16;
    d.set(CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, 1, &mode, "tensor reordering");
  }
  d.finalize("tensor " + std::to_string(uid));
  m_tensors.emplace_back(uid, std::move(d));
  return uid;
}

int64_t graph::virtual_tensor(const std::vector<int64_t>& dims, cudnnDataType_t type) {
  return tensor(dims, packed_strides(dims), type, {.is_virtual = true});
}

int64_t graph::scalar(float value) {
  const int64_t uid = tensor({1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, {.by_value = true});
  m_scalars.emplace_back(uid, value);
  return uid;
}

const descriptor& graph::find(int64_t uid) const {
  for (const auto& [id, d] : m_tensors)
    if (id == uid) return d;
  throw std::logic_error("cuDNN graph: unknown tensor uid " + std::to_string(uid));
}

void graph::pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t y, int64_t t, cudnnDataType_t compute,
                      int64_t axis) {
  descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode")
      .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute, "pointwise precision");
  if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, "pointwise axis");
  pw.finalize("pointwise mode " + std::to_string(mode));

  descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = pw.get();
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "pointwise desc");
  raw = find(x).get();
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "pointwise x");
  if (b >= 0) {
    raw = find(b).get();
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "pointwise b");
  }
  if (t >= 0) {
    raw = find(t).get();
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "pointwise t");
  }
  raw = find(y).get();
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "pointwise y");
  op.finalize("pointwise op (mode " + std::to_string(mode) + ", y uid " + std::to_string(y) + ")");
  m_ops.push_back(std::move(op));
  m_keep.push_back(std::move(pw));  // the op refers to it
}

void graph::reduction(cudnnReduceTensorOp_t op_type, int64_t x, int64_t y) {
  descriptor red(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  red.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op_type, "reduction operator")
      .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, "reduction precision");
  red.finalize("reduction");
  descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = red.get();
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "reduction desc");
  raw = find(x).get();
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "reduction x");
  raw = find(y).get();
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "reduction y");
  op.finalize("reduction op (y uid " + std::to_string(y) + ")");
  m_ops.push_back(std::move(op));
  m_keep.push_back(std::move(red));
}

void graph::matmul(int64_t a, int64_t b, int64_t c, const matmul_options& options) {
  descriptor mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, "matmul precision");
  if (options.padding != 0.0)
    mm.set(CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, 1, &options.padding, "matmul padding value");
  mm.finalize("matmul");
  descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = mm.get();
  op.set(CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "matmul desc");
  raw = find(a).get();
  op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "matmul a");
  raw = find(b).get();
  op.set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "matmul b");
  raw = find(c).get();
  op.set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "matmul c");
  const std::pair<int64_t, cudnnBackendAttributeName_t> overrides[] = {
      {options.m_override, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC},
      {options.n_override, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC},
      {options.k_override, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC}};
  for (const auto& [uid, attribute] : overrides) {
    if (uid < 0) continue;
    raw = find(uid).get();
    op.set(attribute, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "matmul override");
  }
  op.finalize("matmul op (c uid " + std::to_string(c) + ")");
  m_ops.push_back(std::move(op));
  m_keep.push_back(std::move(mm));
}

void graph::reshape(int64_t x, int64_t y) {
  descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = find(x).get();
  op.set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "reshape x");
  raw = find(y).get();
  op.set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "reshape y");
  op.finalize("reshape op (y uid " + std::to_string(y) + ")");
  m_ops.push_back(std::move(op));
}

void graph::finalize(cudnnHandle_t handle) {
  std::vector<cudnnBackendDescriptor_t> ops;
  for (const auto& d : m_ops) ops.push_back(d.get());
  m_op_graph = std::make_unique<descriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  m_op_graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "graph handle");
  m_op_graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops.size()), ops.data(), "graph ops");
  m_op_graph->finalize("operation graph");
}

std::vector<std::pair<int64_t, void*>> graph::scalar_pointers() {
  std::vector<std::pair<int64_t, void*>> out;
  for (auto& [uid, value] : m_scalars) out.emplace_back(uid, &value);
  return out;
}

}  // namespace ptxbench::cudnn
