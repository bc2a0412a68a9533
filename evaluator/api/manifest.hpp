#pragma once
// The launch manifest that comes with a candidate's PTX (docs/design.md,
// "Candidate"): how to launch each kernel and what each parameter binds to.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench {

struct task;

enum class binding_kind { buffer, size, scalar, tensor_map, constant };
const char* to_string(binding_kind k);

struct tensor_map_spec {
  std::string tensor;                   // task tensor (or scratch buffer) it describes
  std::vector<int64_t> box;             // innermost dimension first, as cuTensorMapEncodeTiled
  std::string swizzle = "none";         // none | 32B | 64B | 128B
  // Optional view of the tensor as another row-major shape (outermost first,
  // expressions over sizes), e.g. Q [B,H,S,D] seen as ["B*H*S","D"].
  std::vector<std::string> view;
  std::string l2_promotion = "none";    // none | 64B | 128B | 256B
};

struct param_binding {
  binding_kind kind = binding_kind::buffer;
  std::string name;  // tensor/scratch name, size name or scalar name
  tensor_map_spec map;  // kind == tensor_map
  // kind == constant: a literal; is_float selects how it is written.
  double const_value = 0.0;
  bool const_is_float = false;
};

struct launch_spec {
  std::string kernel;
  std::array<std::string, 3> grid{"1", "1", "1"};   // expressions over sizes
  std::array<std::string, 3> block{"1", "1", "1"};
  std::string shared_bytes = "0";                   // dynamic shared memory
  std::array<std::string, 3> cluster{"1", "1", "1"};
  std::vector<param_binding> params;
};

struct scratch_spec {
  std::string name;
  std::string bytes;       // expression over sizes
  std::string init = "zero";  // zero | poison
};

struct manifest {
  std::vector<launch_spec> launches;
  std::vector<scratch_spec> scratch;
};

// Parses a manifest. Throws input_error with the JSON path of the first bad
// field ("$.launches[0].params[3]: unknown binding 'bufer'").
// Bounds on a model-written manifest (far above any real kernel's needs).
inline constexpr size_t k_max_manifest_bytes = 1u << 20;
inline constexpr size_t k_max_manifest_launches = 64;
inline constexpr size_t k_max_manifest_params = 256;
inline constexpr size_t k_max_manifest_scratch = 64;

manifest parse_manifest(const nlohmann::json& j);
manifest parse_manifest_text(const std::string& text);
nlohmann::json manifest_to_json(const manifest& m);

// Checks the manifest's names and expressions against the task (tensor, size,
// scalar and scratch names exist; expressions parse and evaluate at every size;
// block and cluster are positive). Returns human-readable problems; empty = ok.
std::vector<std::string> check_manifest_against_task(const manifest& m, const task& t);

// Bounds on every resource a manifest asks for, derived from the task
// (manifest_bounds.cpp; docs/decisions.md lists them with their reasons). A
// manifest past one fails the format stage with a message naming the bound,
// so no request of a candidate reaches the harness as something it cannot
// provide. check_manifest_against_task includes these problems.
//   scratch: all buffers together <= k_max_scratch_factor x the task's tensor
//     bytes at that size + k_scratch_slack_bytes (a split-K workspace of 4 fp32
//     partial C's is 2.7x a square GEMM's tensors);
//   dynamic shared memory <= the architecture's per-block opt-in limit;
//   grid <= (2^31-1, 65535, 65535), block <= (1024, 1024, 64) and 1024 threads,
//   cluster <= 16 CTAs and a divisor of the grid;
//   launches <= k_max_candidate_launches (each is counted by a worker process per counted size);
//   tensor maps: rank 1..5, box dims 1..256, strides multiples of 16 bytes below 2^40, dims below 2^32.
inline constexpr double k_max_scratch_factor = 8.0;
inline constexpr int64_t k_scratch_slack_bytes = int64_t(64) << 20;
inline constexpr size_t k_max_candidate_launches = 16;
inline constexpr int64_t k_max_cluster_ctas = 16;
inline constexpr int64_t k_max_block_threads = 1024;
struct size_point;
std::vector<std::string> check_manifest_bounds(const manifest& m, const task& t);
// The bytes of every task tensor at `s`, and the scratch bound derived from them.
double task_tensor_bytes(const task& t, const size_point& s);
double max_scratch_bytes(const task& t, const size_point& s);
// Dynamic plus static shared memory one block may have on `arch` ("sm_90a": 232448).
int64_t max_shared_bytes_per_block(const std::string& arch);

}  // namespace ptxbench
