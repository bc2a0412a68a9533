#pragma once
// Frontier-library baselines, timed in the worker next to the candidate.
// All work is on the caller's current CUDA context and the given stream; device
// pointers are raw. Failure to set up a baseline is a value (available=false,
// why_not), so a result can say which baseline ran or why none did.
#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "evaluator/api/task.hpp"

namespace ptxbench {

class baseline {
 public:
  virtual ~baseline() = default;
  virtual bool available() const = 0;
  virtual std::string why_not() const = 0;
  virtual std::string name() const = 0;  // e.g. "cuBLASLt (best of 8 heuristic algorithms)", "cuDNN 9.x SDPA forward"
  // Times the plans (algorithms) the library proposed and keeps the fastest.
  // Separate from construction so that a caller can build the baseline (host
  // work: heuristics, plan finalisation) while other processes use the GPU,
  // and choose only once the GPU is its alone: a choice timed beside other
  // work can keep a slow plan (on the H200 under load, a cuDNN backward
  // engine ~2.5x slower than the one chosen alone). No-op when there is none.
  virtual void choose(CUstream stream) { (void)stream; }
  // Points the baseline at other buffers of the same shapes (a later
  // evaluation's), keeping its chosen plan. False when it cannot.
  virtual bool bind(const struct baseline_buffers& b) { (void)b; return false; }
  // Runs once, asynchronously on `stream`, with the chosen plan (choose()
  // must have run). Buffers are given by task tensor name.
  virtual void run(CUstream stream) = 0;
  // The type the baseline writes output `tensor` in, in the task's layout, so
  // that its own error can be measured against the reference; nullopt when it
  // writes that output elsewhere (cuDNN's varlen LSE in a padded buffer).
  // cuDNN's fp8 attention on Hopper writes an e4m3 O where the task has bf16.
  virtual std::optional<dtype> output_type(const std::string& tensor, dtype task_type) const {
    (void)tensor;
    return task_type;
  }
};

// Whether make_baseline chooses the plan (times the candidates) before it returns.
enum class baseline_choice { now, later };

struct baseline_buffers {
  // Device pointers by task tensor name (A, B, C / Q, K, V, O, LSE / dO, dQ, dK, dV).
  std::map<std::string, CUdeviceptr> tensors;
};

// GEMM C = A·Bᵀ (A M×K, B N×K row-major; bf16, fp16 or fp8-e4m3 inputs; bf16 C,
// or fp16 C, which fp16 inputs need: cuBLASLt has no fp16 x fp16 -> bf16 GEMM)
// through cuBLASLt: asks the heuristic for several algorithms; choose() times each, keeps the fastest.
std::unique_ptr<baseline> make_gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                             CUstream stream);
// Attention forward / backward through cuDNN's fused SDPA (graph API), or the
// fastest available alternative, saying which.
std::unique_ptr<baseline> make_attention_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                                  CUstream stream);
// Dispatch on task.baseline; with baseline_choice::later the caller calls choose().
std::unique_ptr<baseline> make_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                        CUstream stream, baseline_choice when = baseline_choice::now);

}  // namespace ptxbench
