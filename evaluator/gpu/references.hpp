#pragma once
// Inputs and fp32 references of one task at one size and seed. Inputs are
// seeded draws from each tensor's distribution in the task (uniform in
// [-1, 1] unless it says otherwise; never zeros), index inputs (group offsets,
// cu_seqlens) fixed functions of the sizes; attention backward's O and LSE
// inputs are the fp32 forward pass of its Q, K, V (O rounded to bf16).
// References are computed in fp32 on pristine inputs, before the candidate
// runs (reference_compute.hpp: every variant of docs/task-suite.md): GEMM and
// attention products through cuBLAS SGEMM in pedantic fp32 (no TF32),
// epilogues and softmax in fp32. The public seeds' are cached per (task, size,
// seed); the hidden and timing seeds change with every evaluation and are not.
//
// A candidate that writes outside its buffers could reach a reference and
// make its own wrong output look right: every reference carries a checksum
// taken when it was computed, verified before a cached one is reused and
// after every comparison (`intact`).
#include <cuda.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evaluator/api/task.hpp"
#include "evaluator/gpu/device_memory.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/reference_compute.hpp"
#include "evaluator/gpu/worker_state.hpp"

namespace ptxbench::gpu {

class reference_cache {
 public:
  explicit reference_cache(worker_state& w) : m_w(w) {}
  // Writes the inputs of `seed` into `tensors` (device addresses by name) and
  // returns the references; `keep` caches them for later evaluations.
  // Synchronises the worker's stream.
  std::shared_ptr<const reference_set> prepare(const task& t, const size_point& s, uint64_t seed,
                                               const std::map<std::string, CUdeviceptr>& tensors, bool keep);
  // True when every buffer of `set` still matches its checksum. Synchronises.
  bool intact(const reference_set& set);
  // Drops every cached reference (after a candidate wrote where it must not,
  // or lost its context), and everything kept beside them.
  void clear();
  // Other state of this worker that lives in device memory between jobs (the
  // timing's baseline libraries with their chosen plans), by key; dropped
  // with the references. At most `k_max_kept` entries (the oldest goes).
  static constexpr size_t k_max_kept = 8;
  std::shared_ptr<void> kept(const std::string& key) const;
  void keep(const std::string& key, std::shared_ptr<void> value);
  void forget(const std::string& key);

 private:
  void compute(const task& t, const size_point& s, const std::map<std::string, CUdeviceptr>& tensors,
               reference_set& out);
  worker_state& m_w;
  std::map<std::string, std::shared_ptr<reference_set>> m_cache;
  size_t m_bytes = 0;
  std::vector<std::pair<std::string, std::shared_ptr<void>>> m_kept;  // oldest first
};

// Writes the inputs of `seed`: every input tensor drawn from its
// distribution, except the derived ones of attention backward and the index
// inputs (group offsets, cu_seqlens), which are written from the sizes, the
// same for every seed. Throws std::runtime_error for an index input whose
// type or element count does not fit its sizes.
void fill_inputs(worker_state& w, const task& t, const size_point& s, uint64_t seed,
                 const std::map<std::string, CUdeviceptr>& tensors);

}  // namespace ptxbench::gpu
