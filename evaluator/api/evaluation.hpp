#pragma once
// The evaluator's API as plain value types. A candidate's outcome (does not
// compile, wrong, hangs, slow) is a value of these types, never an exception.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "manifest.hpp"
#include "profile.hpp"
#include "task.hpp"

namespace ptxbench {

// Stages in the order they are judged; the first one that fails is the verdict.
enum class stage { format, compile, runtime, correctness, instructions, performance };
constexpr int stage_count = 6;
const char* to_string(stage s);
stage parse_stage(const std::string& s);  // throws input_error

// What happened to one stage of one evaluation.
//  passed:     ran and passed
//  failed:     ran and failed (this is the verdict stage)
//  not_run:    not reached (an earlier stage failed) or cannot run here (no GPU,
//              task for another architecture); `reason` says which
//  unverified: ran partly; its proof could not be completed (e.g. the dynamic
//              instruction count was unavailable). Never counted as a pass.
//  error:      the evaluator itself failed (a baseline library, a worker lost
//              for a reason not the candidate's, an exception in the
//              harness), after one retry on a fresh worker. Never the
//              candidate's failure: not fed back as its fault, not counted in
//              pass or fail rates, not exported as training data.
enum class stage_status { passed, failed, not_run, unverified, error };
const char* to_string(stage_status s);
stage_status parse_stage_status(const std::string& s);

struct stage_outcome {
  stage_status status = stage_status::not_run;
  std::string reason;  // one line; for failures, the headline fed back to the model
  double time_ms = 0.0;
};

struct ptxas_diagnostic {
  int line = 0;            // PTX line number, 0 when unknown
  std::string severity;    // error | warning | info
  std::string message;
  std::string quoted;      // the offending PTX lines with numbers, for the model
};

struct kernel_resources {
  std::string kernel;
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_bytes = 0;
  int static_shared_bytes = 0;
  int constant_bytes = 0;
};

struct compile_report {
  std::string arch;
  std::string log;                        // the full ptxas/nvJitLink log
  std::vector<ptxas_diagnostic> diagnostics;
  std::vector<kernel_resources> kernels;
  size_t cubin_bytes = 0;
  bool cache_hit = false;                 // the same PTX, arch and compiler were compiled before
};

// One targeted instruction: written? in the SASS? executed? doing the math?
struct instruction_check {
  std::string ptx;                        // e.g. wgmma.mma_async
  int ptx_count = 0;                      // occurrences in the PTX text
  std::vector<std::string> sass_opcodes;  // SASS opcodes it lowers to on this arch
  int sass_count = -1;                    // static count in the cubin; -1 unknown
  int64_t executed = -1;                  // executed warp-level count; -1 not measured
  double flop_share = -1.0;               // executed FLOPs / task FLOPs for math instructions; -1 n/a
  bool is_math = false;
  bool passed = false;
  std::string note;
  // The figures of each counted size (the smallest and the timed one), in the
  // order counted; executed and flop_share above are the lowest of them.
  struct at_size {
    std::string size;
    int64_t executed = 0;
    double flop_share = -1.0;   // math targets: executed FLOPs / task FLOPs
    double bytes_share = -1.0;  // data-moving targets: bytes moved (lower bound) / input bytes
    double per_step = -1.0;     // mbarrier waits: executed / pipeline steps (lower bound)
    bool passed = false;
  };
  std::vector<at_size> sizes;
};

// One executed-instruction counting pass as the supervisor saw it: its wall
// time (waiting for a spare worker included) and the worker's own phases.
struct counting_pass_time {
  std::string size;
  int launch = 0;
  double wall_ms = 0;    // from asking for a spare to the counts back
  double worker_ms = 0;  // inside the worker
  std::map<std::string, double> phase_ms;
};

struct instruction_report {
  bool static_passed = false;   // every target in PTX and SASS
  bool dynamic_ran = false;     // the executed-count pass ran (at every counted size)
  // FLOPs of math the task did not target (FFMA, HFMA2, DFMA, mma.sync where it
  // is no target, tensor-core math on other types...), less the epilogue
  // allowance per output element, / the larger of the task's FLOPs and the
  // target's executed FLOPs (padded tiles), per counted size; above
  // k_max_other_math_share the stage fails.
  std::map<std::string, double> other_math_share;
  std::string sass_source;      // "nvdisasm -c -ndf", "nvdisasm --emit-json", "nvdisasm -c", or "" when none
  std::vector<instruction_check> checks;
  std::map<std::string, int64_t> executed_by_opcode;  // top opcodes of the instrumented run
  double static_ms = 0;                     // the static check (disassembly included)
  std::vector<counting_pass_time> counting;  // the counting passes, where the stage's time went
  // The hardware cross-check (uninstrumented run at the timed size): "off",
  // the compared figures, or why it could not run or disagreed.
  std::string hardware;
};

struct runtime_report {
  std::string error;       // CUDA error name and text, "timeout after N ms", or "worker crashed: signal"
  int launch_index = -1;
  std::string size;        // "M=4096 N=4096 K=4096", or a hidden size's label (hidden_sizes.hpp)
  bool context_lost = false;
  bool hidden_size = false;  // at a hidden size: `size` and `error` name its properties, not its numbers
};

// Error statistics of one output tensor at one size and seed.
struct output_check {
  std::string tensor;
  std::string size;             // "M=4096 N=4096 K=4096", or a hidden size's label (hidden_sizes.hpp)
  uint64_t seed = 0;
  bool hidden_seed = false;     // a seed the model never sees in feedback
  int64_t elements = 0;
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  double rel_l2_error = 0.0;    // ||out-ref|| / ||ref||
  double mismatch_fraction = 0.0;
  int64_t nan_count = 0;
  int64_t untouched_count = 0;  // still holding the poison pattern
  std::string where;            // where the bad elements sit (rows, columns, tiles)
  double max_err_to_scale = 0.0;  // max |out - ref| / max |ref|
  bool timed_run = false;       // the figures of a timed sample, not of a checked run
  bool passed = false;
  // At a hidden size, counts would tell its extent: elements is 0, nan_count
  // and untouched_count are 0 or 1 (none, some), `where` speaks in shares and
  // first/last blocks (redact_hidden_sizes).
  bool hidden_size = false;
};

struct correctness_report {
  std::vector<output_check> outputs;
  bool guards_intact = true;     // no write outside any buffer
  bool inputs_unchanged = true;
  bool stable_across_calls = true;  // same inputs twice -> same output; fresh inputs -> fresh output
  // Every timed sample's output is compared with the reference of the timing
  // seed (poisoned before each sample, scratch re-initialised).
  int timed_samples_checked = 0;
  int timed_samples_wrong = 0;
  std::string note;
};

// Why the timed sampling ended. `converged`: at least the rule's minimum of
// samples and the noise of the candidate (and of the baseline, when timed)
// under its target. The others end sampling first, and the medians are less
// certain: `time_budget` (the job's timing budget spent, a few samples taken),
// `time_limit` (twice the budget spent, whatever the count), `sample_cap` (as
// many samples as the worker keeps checks for). `unrecorded`: a result from an
// evaluator before this field (or a name this one does not know).
enum class sampling_stop { unrecorded, converged, time_budget, time_limit, sample_cap };
const char* to_string(sampling_stop s);

struct performance_report {
  // Raw samples kept per side in a result; more taken are thinned evenly.
  static constexpr size_t k_kept_samples = 256;

  std::string size;
  double candidate_ms = 0.0;        // median
  double candidate_rel_spread = 0.0;  // relative standard deviation
  int candidate_samples = 0;
  double baseline_ms = 0.0;
  double baseline_rel_spread = 0.0;
  int baseline_samples = 0;
  std::string baseline_name;        // e.g. "cuBLASLt (best of 8 heuristics)", "cuDNN SDPA"
  // What the speedup is against: "library" (a frontier library, timed beside
  // the candidate), "roofline" (no library covers the variant: the physical
  // floor, max of bytes / measured bandwidth and FLOPs / measured peak), or
  // "" (no speedup: the library is absent or failed).
  std::string baseline_kind;
  double speedup = 0.0;             // baseline_ms / candidate_ms
  double candidate_tflops = 0.0;
  double baseline_tflops = 0.0;
  double peak_tflops = 0.0;         // measured on this worker
  double pct_of_peak = 0.0;
  double floor_ms = 0.0;            // physical lower bound (bytes / bandwidth, FLOPs / peak)
  bool below_floor = false;         // flagged, not celebrated
  bool output_rechecked = false;   // every timed sample's output verified
  bool inputs_rechecked = false;   // inputs unchanged after the timed runs
  // Samples whose enqueueing outlasted the hold in front of them (2 s), so
  // their time includes the host's; 0 in a healthy run.
  int unheld_samples = 0;
  double threshold = 0.0;
  // How sampling ended (`converged` == (stop == sampling_stop::converged)),
  // and the stopping rule's noise measure at the end: 1.4826 x median
  // absolute deviation / median (robust to a rare outlier sample).
  bool converged = false;
  sampling_stop stop = sampling_stop::unrecorded;
  double candidate_noise = 0.0;
  double baseline_noise = 0.0;
  // The raw samples (ms, as the CUDA events gave them), in the order taken;
  // index i of both is one round (candidate then baseline). At most
  // k_kept_samples each: when more were taken (candidate_samples says how
  // many), k_kept_samples evenly spaced ones, the first and the last included.
  std::vector<float> candidate_sample_ms;
  std::vector<float> baseline_sample_ms;
  // The baseline's own error against the same fp32 reference (timing seed):
  // what an honest frontier implementation reaches on these inputs.
  std::map<std::string, double> baseline_rel_l2;
  std::map<std::string, double> baseline_max_err_to_scale;
};

// The seeds of one evaluation: public ones (their failures are described in
// feedback), the hidden one (drawn at random for each evaluation unless the
// request fixes it), the timing inputs' (never used for checking) and the
// counting passes'.
struct seed_record {
  std::vector<uint64_t> public_seeds;
  uint64_t hidden = 0;
  uint64_t timing = 0;
  uint64_t counting = 0;
};

struct evaluation_request {
  task t;
  std::string ptx;
  std::string manifest_text;  // JSON text as the model wrote it
  // Public seeds whose failures are described in feedback, plus one hidden seed
  // and the timing seed; 0 = drawn at random for this evaluation (the drawn
  // values are in the result's `seeds`).
  std::vector<uint64_t> seeds{1, 2};
  uint64_t hidden_seed = 0;
  uint64_t timing_seed = 0;
  bool run_gpu = true;          // false: stop after compile/static checks
  bool run_timing = true;
  // Profile a candidate that reaches the performance stage (after its verdict).
  bool profile = false;
  double time_limit_ms = 10000;  // per launch, enforced by the worker watchdog
  double timing_budget_ms = 1500;
};

// One step of an evaluation, at its time since the evaluation started
// (the supervisor's clock): "compiled", "main job sent", the main worker's
// own steps as "main: <what it said>", "counting passes started", ...
struct timeline_step {
  std::string what;
  double at_ms = 0;
};

struct evaluation_result {
  stage verdict = stage::format;   // first failing stage; meaningful only when !passed
  bool passed = false;             // every stage passed
  std::string headline;            // one line: "compile: ptxas error at line 42 ..."
  std::map<stage, stage_outcome> stages;
  compile_report compile;
  instruction_report instructions;
  std::optional<runtime_report> runtime;
  correctness_report correctness;
  std::optional<performance_report> performance;
  // Where the time went (evaluator/api/profile.hpp): measured after the
  // verdict, when the request asked for it; never changes the verdict.
  std::optional<profile_report> profile;
  seed_record seeds;
  std::string evaluator_version;
  std::string gpu;                 // "NVIDIA H200 (sm_90)" or "none"
  double total_ms = 0.0;
  // Where the time went, in order (at most k_timeline_steps entries).
  std::vector<timeline_step> timeline;
  static constexpr size_t k_timeline_steps = 512;

  // The three seed metrics of every result.
  bool correct() const;                 // correctness stage passed
  bool instructions_executed() const;   // instructions stage passed (dynamic proof)
  std::optional<double> speedup() const;
  // The furthest stage that passed, or nullopt if none.
  std::optional<stage> furthest_passed() const;
  // Some stage could not be judged because the evaluator failed (status
  // error) and no stage failed: the result says nothing about the candidate.
  // A failed stage is the candidate's verdict whatever error another holds.
  bool evaluator_error() const;
};

// The verdict's name and the ranking of results: evaluator/api/verdict.hpp.

// The reason the runtime stage gives when the task's architecture cannot run
// on the evaluating GPU (an sm_100a task on a Hopper machine): its candidates
// are judged at the compile and SASS level only, and reports say so.
inline constexpr const char* k_compile_and_static_only = "compile and static checks only";

nlohmann::json to_json(const evaluation_result& r);
evaluation_result evaluation_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const evaluation_request& r);
evaluation_request evaluation_request_from_json(const nlohmann::json& j);

// How one GPU of an evaluator has been used since it started (seconds and
// counts, monotonic). `busy_s` is the wall time during which at least one of
// the evaluation's GPU jobs (a checked or timed run on the main worker, or a
// counting pass on a spare) was on this GPU: busy_s over a window's length is
// the fraction of it the GPU had evaluation work.
struct gpu_usage {
  int device = 0;
  double busy_s = 0;       // at least one job or pass on the GPU
  double main_s = 0;       // the main worker's jobs (correctness, timing)
  double counting_s = 0;   // counting passes, summed (they overlap)
  uint64_t jobs = 0;       // main-worker jobs finished
  uint64_t passes = 0;     // counting passes finished
  uint64_t spare_starts = 0;
  double spare_start_s = 0;      // spare starts, fork to hello, summed
  double spare_gated_s = 0;      // the part of them that held the GPU (context, warm-up), summed
  std::map<std::string, double> spare_phase_s;  // the workers' own account of their starts, summed per phase
  // Where the main worker's jobs spent their time, summed by the kind of step
  // the worker reported ("inputs and references for seed", "waiting for the GPU", ...).
  std::map<std::string, double> main_phase_s;
  double timing_wait_s = 0;      // timed runs waiting for the GPU to be theirs alone, summed
  uint64_t restarts = 0;         // main workers replaced
};

// Thrown by evaluate() when the candidate could not be judged at all for a
// reason outside it and outside this request: no evaluation service could be
// reached, or the run is stopping. Nothing is recorded for the candidate; a
// resume judges it. (Any other exception is an evaluator failure on this
// request: recorded as an `error` evaluation, never as the candidate's verdict.)
class evaluator_unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The evaluator as the agent sees it. Implementations are thread-safe:
// many trajectories call evaluate() at once.
class evaluator {
 public:
  virtual ~evaluator() = default;
  virtual evaluation_result evaluate(const evaluation_request& request) = 0;
  virtual std::string version() const = 0;
  virtual std::string gpu_description() const = 0;  // "none" when no GPU
  // One entry per GPU this evaluator drives (none without a GPU or remotely).
  virtual std::vector<gpu_usage> usage() const { return {}; }
};

}  // namespace ptxbench
