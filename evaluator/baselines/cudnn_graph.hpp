#pragma once
// A thin owner of cuDNN backend descriptors: tensors, pointwise / reduction /
// matmul / reshape operations, the operation graph, and the execution plans
// cuDNN's heuristics offer for it. Every call that cuDNN rejects throws
// cudnn::error carrying cuDNN's own last error message.
//
// Tensor uids are chosen by the graph (1, 2, ...). Scalars are by-value
// tensors whose host storage lives in the graph, so a graph must outlive every
// variant pack built from it.
#include <cudnn_graph.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace ptxbench::cudnn {

class descriptor {
 public:
  explicit descriptor(cudnnBackendDescriptorType_t type);
  ~descriptor();
  descriptor(const descriptor&) = delete;
  descriptor& operator=(const descriptor&) = delete;
  descriptor(descriptor&& o) noexcept;
  descriptor& operator=(descriptor&& o) noexcept;

  cudnnBackendDescriptor_t get() const { return m_desc; }
  descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                  const void* values, const char* what);
  void finalize(const std::string& what);

 private:
  cudnnBackendDescriptor_t m_desc = nullptr;
};

struct tensor_options {
  bool is_virtual = false;
  bool by_value = false;
  bool reorder_f16x16 = false;  // dQ accumulator layout some cuDNN 9 backward engines expect
  // uid of an int32 [B+1,1,1,1] tensor of per-batch element offsets (packed
  // variable-length rows, "ragged" layout), or -1.
  int64_t ragged_offset = -1;
};

// A matmul's optional per-batch row / column / inner counts (int32 [B,1,1,1]
// tensors, the variable sequence lengths of padded or ragged attention) and
// the value the padded part of its output takes.
struct matmul_options {
  int64_t m_override = -1, n_override = -1, k_override = -1;
  double padding = 0.0;
};

class graph {
 public:
  int64_t tensor(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, cudnnDataType_t type,
                 tensor_options options = {});
  // A virtual (on-chip) tensor with packed strides.
  int64_t virtual_tensor(const std::vector<int64_t>& dims, cudnnDataType_t type);
  // A by-value fp32 scalar of shape [1,1,1,1].
  int64_t scalar(float value);

  // y = mode(x[, b][, t]); b and t are -1 when unused. `axis` only for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t y, int64_t t = -1,
                 cudnnDataType_t compute = CUDNN_DATA_FLOAT, int64_t axis = -1);
  void reduction(cudnnReduceTensorOp_t op, int64_t x, int64_t y);
  void matmul(int64_t a, int64_t b, int64_t c, const matmul_options& options = {});
  void reshape(int64_t x, int64_t y);

  // Finalizes the operation graph for `handle`.
  void finalize(cudnnHandle_t handle);
  cudnnBackendDescriptor_t operation_graph() const { return m_op_graph ? m_op_graph->get() : nullptr; }

  // Host addresses of the by-value scalars, by uid, for the variant pack.
  std::vector<std::pair<int64_t, void*>> scalar_pointers();

 private:
  const descriptor& find(int64_t uid) const;
  std::vector<std::pair<int64_t, descriptor>> m_tensors;
  std::vector<descriptor> m_ops;   // operation descriptors, in graph order
  std::vector<descriptor> m_keep;  // pointwise/reduction/matmul descriptors the operations refer to
  std::deque<std::pair<int64_t, float>> m_scalars;  // deque: addresses stay put
  std::unique_ptr<descriptor> m_op_graph;
  int64_t m_next_uid = 1;
};

struct plan {
  std::shared_ptr<descriptor> config;  // the engine configuration the plan was made from
  std::shared_ptr<descriptor> execution_plan;
  int64_t workspace_bytes = 0;
  int64_t engine_index = -1;
};

// Plans for a finalized graph from cuDNN's heuristics (mode A, then the
// fallback list), at most `max_plans`. Configurations that fail to finalize
// are skipped; their messages are appended to `rejected`. Empty when none works.
std::vector<plan> make_plans(cudnnHandle_t handle, const graph& g, int max_plans, std::string& rejected);

// A variant pack binding uids to device (or by-value host) pointers.
descriptor make_variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace);

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims);

}  // namespace ptxbench::cudnn
