#pragma once
// A task fixes the mathematics, data layout, sizes, target architecture and the
// instructions to use (docs/design.md, "Tasks"). It does not fix the kernel's
// parameter list: the candidate's manifest binds parameters to these tensors.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench {

enum class dtype { bf16, fp16, fp8_e4m3, fp32, i32 };
enum class tensor_role { input, output };

const char* to_string(dtype t);
dtype parse_dtype(const std::string& s);  // throws input_error
int dtype_bytes(dtype t);

// How the harness draws a random input tensor (never zeros). Values are
// uniform in [-scale, scale] or normal with standard deviation `scale`; each
// row (the last dimension) can then be multiplied by a factor drawn
// log-uniformly from [row_scale_min, row_scale_max], and a hashed one row in
// `spike_every` by `spike_scale`. Attention tasks use this to get softmax rows
// that are peaked (large score spread) and some dominated by a few keys, where
// an error in the softmax or its backward shows; flat rows hide it.
struct input_distribution {
  // group_offsets and cu_seqlens are not random: an i32 tensor the harness
  // writes from the sizes (docs/task-suite.md), the same for every seed.
  enum class shape { uniform, normal, group_offsets, cu_seqlens };
  shape kind = shape::uniform;
  double scale = 1.0;
  double row_scale_min = 1.0;
  double row_scale_max = 1.0;
  int64_t spike_every = 0;  // 0: no spikes
  double spike_scale = 1.0;
};

struct tensor_spec {
  std::string name;
  dtype type = dtype::bf16;
  std::vector<std::string> shape;  // outermost first, row-major; entries are size names or expressions
  tensor_role role = tensor_role::input;
  input_distribution init;  // inputs only ("init" in the task file)
};

// One point of the task's size grid, e.g. {M:4096,N:4096,K:4096}. The timed
// size is the one performance is measured at; every size is checked for correctness.
struct size_point {
  std::map<std::string, int64_t> values;
  bool timed = false;
  // Never shown: not in the prompt, feedback, exports, reports or the viewer
  // (docs/task-suite.md, "Hidden-size feedback"). Correctness requires it.
  bool hidden = false;
};

// The machine-checked form of a task's constraints for one size name
// ("size_rules" in the task file): every size, public or hidden, obeys it.
struct size_rule {
  int64_t min = 1;
  int64_t max = 0;          // 0: no upper bound
  int64_t multiple_of = 1;
  std::string equals;       // an integer expression over the sizes ("4*HKV", "128"); empty: none
};

struct tolerance {
  double atol = 0.0;
  double rtol = 0.0;
  // Fraction of elements allowed outside atol + rtol*|ref| (0: none).
  double max_mismatch_fraction = 0.0;
  // Normalised bounds over the whole output (0: not checked):
  // ||out - ref||_2 / ||ref||_2 and max |out - ref| / max |ref|.
  double rel_l2 = 0.0;
  double max_err_to_scale = 0.0;
};

// The operation's options that the reference, the baseline and the solutions
// read (docs/task-suite.md, "Operations"). GQA/MQA come from the size HKV.
struct task_op {
  // gemm
  std::string layout = "nt";      // nt: B is [N, K]; nn: B is [K, N]
  std::string epilogue = "none";  // none | bias | bias_gelu | alpha_beta
  bool batched = false;           // a leading batch dimension L on A, B and C
  bool grouped = false;           // MoE groups: A [T, K], B [G, N, K], offsets [G+1]
  bool scaled = false;            // fp8 per-tensor scales scale_a, scale_b
  // attention
  bool varlen = false;  // packed sequences with cu_seqlens
  bool decode = false;  // one query token per sequence against a KV cache
  bool fp8 = false;     // e4m3 Q, K, V with descale scalars
};

struct task {
  std::string id;
  std::string family;  // gemm | attention_fwd | attention_bwd
  std::string arch;    // sm_90a, sm_100a
  std::string title;
  std::string statement;  // precise mathematical statement shown to the model
  std::vector<tensor_spec> tensors;  // in declaration order
  std::vector<size_point> sizes;
  std::map<std::string, std::string> scalars;  // name -> real expression over sizes, e.g. scale -> "rsqrt(D)"
  std::string flops;                           // integer expression over sizes
  std::string reference;                       // gemm | attention_fwd | attention_bwd
  std::string baseline;                        // cublaslt | cudnn_sdpa_fwd | cudnn_sdpa_bwd
  std::vector<std::string> target_instructions;  // PTX opcode prefixes, e.g. "wgmma.mma_async"
  // "default" plus optional per-tensor overrides. The JSON may give a single
  // {atol, rtol} (the default) or {"default": {...}, "LSE": {...}}.
  std::map<std::string, tolerance> tolerances;
  const tolerance& tolerance_for(const std::string& tensor) const;
  double speedup_threshold = 0.0;
  bool causal = false;  // attention only
  task_op op;
  int level = 0;  // 1-4 (docs/task-suite.md); 0: not given
  std::map<std::string, std::string> variant;  // axis -> value, e.g. dtype -> bf16
  std::vector<std::string> suites;             // e.g. core, full
  std::string constraints;  // what every size obeys, shown in the prompt
  std::map<std::string, size_rule> size_rules;  // size name -> rule (may be empty for a client's task)
  // False when the task's arch cannot run on the evaluating GPU family in this
  // suite (sm_100a on a Hopper machine): only format, compile and static checks run.
  bool runs_on_hopper = true;
  std::string notes;  // architecture notes for the prompt
  std::filesystem::path source;  // file it was loaded from, if any

  const tensor_spec* find_tensor(const std::string& name) const;
  const size_point& timed_size() const;  // first size with timed=true, else the first
  // The sizes a prompt may show (every size not marked hidden).
  std::vector<size_point> public_sizes() const;
  size_t hidden_size_count() const;
  std::vector<std::string> size_names() const;
};

// Bounds on a task document, far above the suite's (tasks/*.json: 9 tensors,
// 5 sizes, 3 targets): evald parses task documents that clients send.
inline constexpr size_t k_max_task_tensors = 64;
inline constexpr size_t k_max_task_sizes = 64;
inline constexpr size_t k_max_task_size_names = 32;
inline constexpr size_t k_max_tensor_dims = 8;
inline constexpr size_t k_max_task_scalars = 64;
inline constexpr size_t k_max_task_targets = 64;
inline constexpr size_t k_max_target_chars = 64;

// Parses a task document. Throws input_error naming `source` and the JSON path
// of the first bad field (unknown dtype, shape name not in sizes, missing id,
// an arch not of the form sm_90a, a list past its bound...); `path` is the
// document's own path ("$.task" inside a request).
task parse_task(const nlohmann::json& j, const std::string& source = "", const std::string& path = "$");
task load_task_file(const std::filesystem::path& path);
// Loads every *.json directly in `dir` and expands every family file in
// `dir`/families (task_family.hpp), sorted by id. Throws on the first bad
// file or a task id given twice.
std::vector<task> load_task_dir(const std::filesystem::path& dir);
// The task `id` of load_task_dir(dir); throws input_error naming the folder
// when there is none.
task load_task(const std::filesystem::path& dir, const std::string& id);
// The tasks of `all` in suite `name` ("full": every task). Throws input_error
// naming the known suites when no task is in `name`.
std::vector<task> tasks_in_suite(const std::vector<task>& all, const std::string& name);
std::vector<std::string> suite_names(const std::vector<task>& all);
nlohmann::json task_to_json(const task& t);

// Number of elements of tensor `t` at size `s` (product of its shape).
int64_t tensor_elements(const tensor_spec& t, const size_point& s);
std::map<std::string, int64_t> size_values(const size_point& s);
// Scalars (e.g. scale) evaluated at size `s`.
std::map<std::string, double> scalar_values(const task& t, const size_point& s);
double task_flops(const task& t, const size_point& s);
// "M=4096 N=4096 K=4096" (names in sorted order), whether hidden or not: for
// the evaluator's own use. What a result, a prompt or a report says about a
// size is size_label (hidden_sizes.hpp).
std::string describe_size(const size_point& s);

}  // namespace ptxbench
