#pragma once
// Compile and static checks: everything about a candidate that needs no GPU.
// ptxas (or nvJitLink) turns PTX into the cubin that is later loaded,
// disassembled and profiled (the same bytes); the PTX text and the SASS are scanned for the
// task's target instructions. Candidate problems are values; only broken
// infrastructure throws (or, for a compile, is compiled_module::evaluator_error).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/manifest.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {

struct compiled_module {
  bool ok = false;
  std::vector<char> cubin;  // ELF bytes for the task's arch; empty when !ok
  compile_report report;    // log, diagnostics with quoted PTX lines, resources per kernel
  double time_ms = 0.0;
  // Not ok for a reason of the evaluator's, not of the PTX: no compiler, a
  // temporary file not written, a compiler that crashed or failed without a
  // diagnostic, no cubin. "" when the compile ran and judged the PTX.
  std::string evaluator_error;
};

// Compiles for `arch` (e.g. "sm_90a") with verbose ptxas output, through the
// compiler chosen by compiler_backend::automatic (below). Thread-safe. Works
// without a GPU or driver. Never throws for a bad module or architecture name.
// Results are cached in memory (compile_cache.cpp): the same PTX for the same
// architecture and compiler build is compiled once (report.cache_hit on a
// hit); $PTXBENCH_COMPILE_CACHE_MB bounds the cache (default 256, 0 = off).
compiled_module compile_ptx(const std::string& ptx, const std::string& arch);

struct compile_cache_stats {
  uint64_t hits = 0, misses = 0, evictions = 0;
  size_t entries = 0, bytes = 0;
};
compile_cache_stats compile_cache_statistics();
void compile_cache_clear();
size_t compile_cache_capacity();
// "major.minor" of the nvJitLink library linked in.
std::string nvjitlink_version();

// The compiler behind compile_ptx. nvJitLink compiles PTX as a relocatable
// unit (ptxas -c), in which ptxas drops setmaxnreg ("C7504: 'setmaxnreg'
// ignored to maintain compatibility across compilation units"), a real loss
// for warp-specialised Hopper kernels. The toolkit's ptxas executable, run as a
// child process, compiles the module as a whole program, as the driver's JIT
// and nvcc do. automatic: $PTXBENCH_COMPILER ("ptxas" or "nvjitlink") when
// set, else ptxas when found (ptxas_path()), else nvJitLink. The first line of
// compile_report::log names the compiler used.
enum class compiler_backend { automatic, ptxas, nvjitlink };
compiled_module compile_ptx(const std::string& ptx, const std::string& arch, compiler_backend backend);
// ptxas found via $PTXBENCH_PTXAS, the CUDA toolkit's bin folder, or PATH; "" when none.
std::string ptxas_path();

// Bounds of the compile stage. A module past a size bound fails to compile with
// a message naming it ("PTX has 50000 entries; the limit is 10000") before any
// compiler runs; ptxas is killed when it runs past the time limit. Far above
// any real kernel module (6 000 trivial entries compile in seconds).
inline constexpr size_t k_max_ptx_bytes = 16u << 20;
inline constexpr size_t k_max_ptx_entries = 10000;
inline constexpr int k_compile_time_limit_s = 120;
// The time limit in ms: $PTXBENCH_COMPILE_TIME_LIMIT_S (seconds, > 0) when set, else k_compile_time_limit_s.
int compile_time_limit_ms();
// "" when `ptx` is within the size bounds, else why not.
std::string ptx_bounds_problem(const std::string& ptx);

// Functions the module declares `.extern .func` (defined elsewhere: the
// device runtime's malloc, free, vprintf, __assertfail, cudaLaunchDeviceV2...),
// with the 1-based line of the declaration. Comments and strings are ignored.
struct ptx_external_function {
  std::string name;
  int line = 0;
};
std::vector<ptx_external_function> ptx_external_functions(const std::string& ptx);
// The format stage's refusal of such a module, naming the functions; "" when it declares none.
std::string system_calls_problem(const std::string& ptx);

// The first special register the PTX reads that lets a kernel time itself
// (%clock, %clock_hi, %clock64, %globaltimer, %globaltimer_lo, %globaltimer_hi,
// the performance monitors %pm0..%pm7 and %pm0_64..%pm7_64), with its 1-based
// line; an empty name when it reads none. Comments and strings are ignored.
// Such a kernel can tell a counted run from one that is not (instrumented
// code runs slower), so the hardware cross-check runs for it by default.
struct ptx_timer_read {
  std::string name;
  int line = 0;
};
ptx_timer_read ptx_timer_read_of(const std::string& ptx);

// A kernel parameter as declared in the PTX `.entry` header.
struct ptx_param {
  std::string name;
  std::string type;      // .u64, .b32, .f32, .b8 ...
  int size_bytes = 0;    // total size (element size × array length)
  int align = 0;         // .align N if given, else the element size
  int array_length = 0;  // 0 when not an array
};

struct ptx_entry {
  std::string name;
  std::vector<ptx_param> params;
  int line = 0;  // 1-based line of the .entry directive
  // Per-entry performance directives, when present (.maxntid, .reqntid, .minnctapersm, .maxnreg, .reqnctapercluster)
  // Keys keep the dot (".maxntid"); values are the operands without spaces ("256,1,1").
  std::map<std::string, std::string> directives;
};

// Parses every `.entry` (and `.visible .entry`) header of the PTX text.
// Tolerates comments and Triton/nvcc-style formatting. Never throws.
std::vector<ptx_entry> parse_ptx_entries(const std::string& ptx);

// Checks each launch against the PTX entries before anything runs: the kernel
// exists, parameter count matches, each binding's width matches the declared
// width (buffer: 8 bytes; size: 4 or 8; scalar f32: 4; tensor_map: 128 bytes
// aligned 64; const: the declared width). Returns one message per problem,
// written for the model ("launch 0 (gemm_kernel): param 3 'p3' is .u32 (4 bytes)
// but binds tensor_map A, which needs .param .align 64 .b8 p3[128]").
std::vector<std::string> check_manifest_against_ptx(const manifest& m, const std::vector<ptx_entry>& entries,
                                                    const task& t);

// One SASS instruction of the cubin.
struct sass_instruction {
  std::string function;  // kernel (or device function) name
  uint64_t offset = 0;   // byte offset in the function's code, as CUPTI reports PCs
  std::string opcode;    // base opcode without modifiers or predicate, e.g. HGMMA, UTMALDG
  std::string text;      // full instruction text
};

struct sass_listing {
  bool available = false;  // false when no disassembler could be run
  std::string source;      // "nvdisasm -c -ndf", "nvdisasm --emit-json", "nvdisasm -c"
  std::string error;       // why it is unavailable
  std::vector<sass_instruction> instructions;
  std::map<std::string, int> opcode_counts;
};

// Disassembles the cubin with nvdisasm (found via $PTXBENCH_NVDISASM, PATH,
// /usr/local/cuda/bin, or the nvidia-cuda-nvdisasm Python wheel). Never throws.
sass_listing disassemble(const std::vector<char>& cubin);

// Listings are cached by cubin (and nvdisasm) like compiles; for tests:
void disassembly_cache_clear();
uint64_t disassembly_cache_hits();

// The nvdisasm disassemble() would run, found as described there; "" when none.
std::string nvdisasm_path();

// The PTX -> SASS opcode table for an architecture (data, from
// evaluator/compile/sass_table.json), e.g. wgmma.mma_async -> {HGMMA, QGMMA}.
struct sass_mapping {
  std::string ptx;
  std::vector<std::string> sass_opcodes;
  bool is_math = false;
  // Longer PTX opcodes that start with `ptx` but are other instructions (for
  // cp.async: cp.async.bulk, cp.async.wait_group, ...); not counted as `ptx`.
  std::vector<std::string> ptx_excludes;
  // What executing the target must accomplish for the dynamic check
  // (evaluator/pool/instruction_proof.hpp states each rule):
  //   math        carry the task's FLOPs (is_math)
  //   load_bytes  move a share of the input bytes from global memory (TMA loads)
  //   smem_bytes  read a share of the input bytes out of shared memory (ldmatrix)
  //   per_step    execute at least once per pipeline step (mbarrier waits)
  //   per_cta     execute at least once per CTA launched (the default)
  std::string work = "per_cta";
  // The SASS opcodes whose executions count for `work` (default: sass_opcodes);
  // cp.async.bulk.tensor lowers to loads (UTMALDG) and stores (UTMASTG), and
  // only loads move inputs in.
  std::vector<std::string> work_opcodes;
  // Bytes one warp-level execution moves at least (smem_bytes).
  double min_bytes_per_exec = 0.0;
};
std::vector<sass_mapping> sass_table(const std::string& arch);

// Whether `inst` is an instance of a table opcode: the table opcode equals the
// instruction's full opcode or a prefix of it ending at a '.', so
// "SYNCS.PHASECHK" matches "SYNCS.PHASECHK.TRANS64.TRYWAIT" and "HGMMA"
// matches "HGMMA.64x128x16.F32.BF16". Use it to map executed PCs to targets.
bool sass_opcode_matches(const sass_instruction& inst, const std::string& table_opcode);

// FLOPs performed by one warp-level execution of a math SASS instruction, from
// its text (e.g. "HGMMA.64x256x16.F32.BF16" -> 2*64*256*16 / 4 warps). 0 when
// not a math instruction or unknown.
// Convention: a warpgroup MMA (HGMMA/QGMMA/IGMMA MxNxK) is executed by each of
// its 4 warps and smsp__sass_inst_executed counts each, so one count carries
// 2*M*N*K/4; a warp MMA (HMMA.16816, IMMA.16832, ...) carries 2*M*N*K. An MMA
// whose destination is RZ (ptxas pads wgmma sequences with
// "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT") does no work: 0. tcgen05's
// UTCHMMA/UTCQMMA keep their shape in a register descriptor: 0 (unknown).
double sass_instruction_flops(const sass_instruction& inst);

// What one warp-level execution of a SASS instruction does to the task's data
// (evaluator/compile/sass_opcodes.json, every opcode of sm_90a and sm_100a
// that the repository's PTX and a PTX of every instruction kind compile to):
//   tensor      matrix instructions; flops from the shape in the opcode (2*M*N*K,
//               a quarter per warp for warpgroup MMAs, half for sparse ones), 0
//               for an RZ destination, -1 when the shape is not in the opcode (UTC*MMA)
//   float_math  floating-point arithmetic (FFMA 64, FMUL 32, HFMA2 128, DFMA 64,
//               MUFU 32, FFMA2 128...), 0 for an RZ source (a move idiom)
//   integer     integer multiplies and dot products (IMAD 64, IDP.4A 256...), 0 for
//               an RZ source or a multiply by an immediate power of two
//   other       no arithmetic on the data (memory, control, moves, conversions...)
//   unknown     not in the table: its work cannot be accounted for
enum class sass_kind { tensor, float_math, integer, other, unknown };
struct sass_class_info {
  sass_kind kind = sass_kind::unknown;
  double flops = 0;          // per warp-level execution; -1: a tensor shape the opcode does not carry
  std::string operand_type;  // "BF16", "F16", "E4M3", "TF32", "S8", "F32", "F64", "B1", "INT"; "" when none
};
sass_class_info classify_sass(const sass_instruction& inst);
// Whether a base opcode ("FFMA", "HGMMA") is in the table.
bool sass_opcode_known(const std::string& base_opcode);

// Static part of the instructions stage: counts of each target in the PTX
// (comments ignored) and in the SASS. Sets static_passed; dynamic fields stay -1.
// PTX matching: an instruction word in instruction position (statement start,
// after a label or a predicate guard) equal to the target or starting with
// target + '.', and not with one of the table's ptx_excludes (so "cp.async"
// counts cp.async.cg/ca copies, not cp.async.bulk* or cp.async.wait_group).
// SASS counting uses sass_opcode_matches; math targets skip RZ-destination
// padding. check.passed is the static verdict (in PTX and in SASS) until the
// dynamic pass revises it; a target without a table entry, or SASS that could
// not be produced, does not pass (note says why; sass_source is "" then).
instruction_report static_instruction_check(const task& t, const std::string& ptx, const sass_listing& sass);

}  // namespace ptxbench
