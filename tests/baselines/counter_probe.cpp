// Device probe for the hardware-counter cross-check of the instructions stage:
// does CUPTI's range profiler count on this GPU, what do its metrics read for
// kernels of known instruction mix and for the reference solutions, what does
// a counted run cost, and do the counts agree with CUPTI's patched SASS counts
// of the same launch (a second process: a process records one patched pass).
//
//   counter_probe info                                   chip, support, passes of the metric sets
//   counter_probe hw   TASK.json MANIFEST.json KERNEL.cubin LABEL
//   counter_probe sass TASK.json MANIFEST.json KERNEL.cubin LISTING.sass LAUNCH LABEL [smallest]
//
// Both run the manifest's launches at the task's timed size on random inputs.
// Lines: "HW <label> <range> <metric>=<value>...", "SASS <label> <launch>
// <opcode>=<count>...", "COST <label> ..." (ms). Exit 0 unless the probe itself failed.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/manifest.hpp"
#include "evaluator/api/task.hpp"
#include "evaluator/compile/sass_parse.hpp"
#include "evaluator/gpu/launcher.hpp"
#include "evaluator/profile/hw_counter.hpp"
#include "evaluator/profile/sass_counter.hpp"
#include "tests/baselines/gpu_support.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;

namespace {

const std::vector<std::string> k_instruction_metrics = {
    "smsp__inst_executed.sum",
    "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__inst_executed_pipe_tensor_op_imma.sum",
    "sm__inst_executed_pipe_tensor_op_dmma.sum",
    "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum",
    "sm__inst_executed_pipe_fma.sum",
    "sm__inst_executed_pipe_fma_type_fp16.sum",
    "sm__inst_executed_pipe_fp64.sum",
    "sm__inst_executed_pipe_tma.sum",
};
const std::vector<std::string> k_extra_metrics = {
    "sm__ops_path_tensor_src_fp16.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp8.sum",
    "sm__ops_path_tensor_src_int8.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__inst_executed_pipe_alu.sum",
    "sm__inst_executed_pipe_fmaheavy.sum",
    "sm__inst_executed_pipe_fmalite.sum",
    "sm__inst_executed_pipe_xu.sum",
    "sm__inst_executed_pipe_uniform.sum",
    "sm__inst_executed_pipe_lsu.sum",
    "sm__inst_executed_pipe_adu.sum",
    "sm__inst_executed_pipe_cbu.sum",
    "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
    "l1tex__tmain_requests.sum",
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The candidate at the timed size: buffers, random inputs, the prepared launches.
struct setup {
  task t;
  manifest m;
  size_point s;
  std::vector<char> cubin;
  std::map<std::string, std::unique_ptr<device_memory>> buffers;
  std::map<std::string, CUdeviceptr> addresses;
};

// `smallest`: the task's smallest size instead of the timed one.
void load_setup(setup& st, const char* task_path, const char* manifest_path, const char* cubin_path,
                bool smallest = false) {
  st.t = load_task_file(task_path);
  st.m = parse_manifest_text(read_file(manifest_path));
  st.s = st.t.timed_size();
  auto volume = [&](const size_point& s) {
    double n = 0;
    for (const auto& ts : st.t.tensors) n += double(tensor_elements(ts, s));
    return n;
  };
  if (smallest)
    for (const auto& s : st.t.sizes)
      if (volume(s) < volume(st.s)) st.s = s;
  std::string bytes = read_file(cubin_path);
  st.cubin.assign(bytes.begin(), bytes.end());
  uint64_t seed = 1;
  for (const auto& ts : st.t.tensors) {
    size_t n = size_t(tensor_elements(ts, st.s));
    auto buf = std::make_unique<device_memory>(n * size_t(dtype_bytes(ts.type)));
    if (ts.role == tensor_role::input) {
      if (ts.type == dtype::bf16) buf->upload(random_bf16(n, seed++, -1.f, 1.f).bits.data());
      else if (ts.type == dtype::fp16) buf->upload(random_fp16(n, seed++, -1.f, 1.f).bits.data());
      else if (ts.type == dtype::fp8_e4m3) buf->upload(random_fp8(n, seed++, 4.f).bits.data());
      else if (ts.type == dtype::fp32) {
        std::vector<float> v = random_bf16(n, seed++, -1.f, 1.f).values;
        buf->upload(v.data());
      } else {
        buf->fill_bytes(0);
      }
    }
    st.addresses[ts.name] = buf->ptr();
    st.buffers[ts.name] = std::move(buf);
  }
  for (const auto& sc : st.m.scratch) {
    auto buf = std::make_unique<device_memory>(size_t(std::max<int64_t>(256, eval_int(sc.bytes, st.s.values))));
    st.addresses[sc.name] = buf->ptr();
    st.buffers[sc.name] = std::move(buf);
  }
}

// Outputs poisoned and scratch reset, as before every run of the evaluator.
void reset(setup& st) {
  for (const auto& ts : st.t.tensors)
    if (ts.role == tensor_role::output) st.buffers.at(ts.name)->fill_bytes(0xFF);
  for (const auto& sc : st.m.scratch) st.buffers.at(sc.name)->fill_bytes(sc.init == "poison" ? 0xFF : 0x00);
}

gpu::launch_plan plan_of(setup& st, CUmodule module) {
  gpu::device_limits limits = gpu::query_limits(the_gpu().device);
  gpu::launch_plan plan = gpu::prepare_launches(module, st.m, st.t, st.s, st.addresses, limits);
  if (!plan.refusal.empty()) throw std::runtime_error("launch refused: " + plan.refusal);
  return plan;
}

void run(gpu::prepared_launch& l) {
  check(gpu::enqueue(l, the_gpu().stream), "launch");
  check(cuStreamSynchronize(the_gpu().stream), "launch (synchronise)");
}

void print_hw(const std::string& label, const hw_count_result& r) {
  std::printf("COST %s hw passes=%d setup_ms=%.1f run_ms=%.1f decode_ms=%.1f ok=%d%s%s\n", label.c_str(), r.passes,
              r.setup_ms, r.run_ms, r.decode_ms, int(r.ok), r.ok ? "" : " error=", r.error.c_str());
  for (size_t i = 0; i < r.values.size(); ++i) {
    std::printf("HW %s %s", label.c_str(), r.range_names[i].c_str());
    for (size_t k = 0; k < r.metrics.size(); ++k) std::printf(" %s=%.0f", r.metrics[k].c_str(), r.values[i][k]);
    std::printf("\n");
  }
}

int hw(setup& st, const std::string& label) {
  auto& g = the_gpu();
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, st.cubin.data()), "cuModuleLoadData");
  gpu::launch_plan plan = plan_of(st, module);
  CUevent a, b;
  check(cuEventCreate(&a, CU_EVENT_DEFAULT), "event");
  check(cuEventCreate(&b, CU_EVENT_DEFAULT), "event");
  std::vector<float> times;
  for (int rep = 0; rep < 6; ++rep) {
    reset(st);
    check(cuCtxSynchronize(), "sync");
    check(cuEventRecord(a, g.stream), "record");
    for (auto& l : plan.launches) check(gpu::enqueue(l, g.stream), "launch");
    check(cuEventRecord(b, g.stream), "record");
    check(cuEventSynchronize(b), "sync");
    float ms = 0;
    check(cuEventElapsedTime(&ms, a, b), "elapsed");
    if (rep > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  std::printf("COST %s plain_run_ms=%.3f (median of %zu, launches %zu)\n", label.c_str(), times[times.size() / 2],
              times.size(), plan.launches.size());
  auto pass = [&](const hw_range_marks& marks) {
    reset(st);
    check(cuCtxSynchronize(), "sync");
    for (size_t i = 0; i < plan.launches.size(); ++i) {
      marks.push("launch" + std::to_string(i));
      run(plan.launches[i]);
      marks.pop();
    }
  };
  for (int rep = 0; rep < 2; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    hw_count_result r = count_hardware(g.context, k_instruction_metrics, plan.launches.size(), 16, pass);
    std::printf("COST %s instruction_set_rep%d wall_ms=%.1f\n", label.c_str(), rep, ms_since(t0));
    print_hw(label + "#" + std::to_string(rep), r);
  }
  std::vector<std::string> all = k_instruction_metrics;
  all.insert(all.end(), k_extra_metrics.begin(), k_extra_metrics.end());
  auto t0 = std::chrono::steady_clock::now();
  hw_count_result r = count_hardware(g.context, all, plan.launches.size(), 64, pass);
  std::printf("COST %s wide_set wall_ms=%.1f\n", label.c_str(), ms_since(t0));
  print_hw(label + "#wide", r);
  plan = {};
  cuModuleUnload(module);
  return 0;
}

int sass(setup& st, const std::string& listing_path, size_t target, const std::string& label) {
  auto& g = the_gpu();
  std::vector<sass_instruction> listing = parse_nvdisasm_text(read_file(listing_path));
  std::map<std::pair<std::string, uint64_t>, std::string> opcode_at;
  for (const auto& inst : listing) opcode_at[{inst.function, inst.offset}] = inst.text.substr(0, inst.text.find(' '));
  CUmodule before = nullptr;
  check(cuModuleLoadData(&before, st.cubin.data()), "cuModuleLoadData");
  {
    gpu::launch_plan plan = plan_of(st, before);
    reset(st);
    for (size_t i = 0; i < target && i < plan.launches.size(); ++i) run(plan.launches[i]);
  }
  cuModuleUnload(before);
  check(cuCtxSynchronize(), "sync");
  CUmodule module = nullptr;
  gpu::launch_plan plan;
  auto t0 = std::chrono::steady_clock::now();
  sass_count_result counted = count_executed_sass(g.context, [&] {
    check(cuModuleLoadData(&module, st.cubin.data()), "cuModuleLoadData in the pass");
    plan = plan_of(st, module);
    run(plan.launches.at(target));
  });
  std::printf("COST %s sass_pass wall_ms=%.1f setup_ms=%.1f work_ms=%.1f flush_ms=%.1f ok=%d %s\n", label.c_str(),
              ms_since(t0), counted.setup_ms, counted.work_ms, counted.flush_ms, int(counted.ok), counted.error.c_str());
  std::map<std::string, uint64_t> by_opcode;
  uint64_t total = 0, unmapped = 0;
  for (const auto& c : counted.counts) {
    auto it = opcode_at.find({c.function, c.pc_offset});
    if (it == opcode_at.end()) {
      unmapped += c.executed;
      continue;
    }
    if (c.executed) by_opcode[it->second] += c.executed;
    total += c.executed;
  }
  std::printf("SASS %s launch%zu size=[%s] total=%llu unmapped=%llu", label.c_str(), target, describe_size(st.s).c_str(), (unsigned long long)total,
              (unsigned long long)unmapped);
  for (const auto& [op, n] : by_opcode) std::printf(" %s=%llu", op.c_str(), (unsigned long long)n);
  std::printf("\n");
  plan = {};
  if (module) cuModuleUnload(module);
  return counted.ok ? 0 : 1;
}

int info() {
  auto& g = the_gpu();
  std::string error;
  std::string chip = hardware_chip(g.context, error);
  std::printf("INFO device=%s chip=%s %s\n", g.name.c_str(), chip.c_str(), error.c_str());
  std::vector<std::string> all = k_instruction_metrics;
  all.insert(all.end(), k_extra_metrics.begin(), k_extra_metrics.end());
  for (const auto& m : all) {
    std::string e;
    int n = hardware_passes(chip, {m}, e);
    std::printf("INFO metric %s passes=%d %s\n", m.c_str(), n, e.c_str());
  }
  int p = hardware_passes(chip, k_instruction_metrics, error);
  std::printf("INFO instruction_set passes=%d\n", p);
  p = hardware_passes(chip, all, error);
  std::printf("INFO wide_set passes=%d\n", p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (!the_gpu().ok) {
      std::printf("no GPU: %s\n", the_gpu().why_not.c_str());
      return 77;
    }
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "info") return info();
    if (mode == "hw" && argc == 6) {
      setup st;
      load_setup(st, argv[2], argv[3], argv[4]);
      return hw(st, argv[5]);
    }
    if (mode == "sass" && (argc == 8 || argc == 9)) {
      setup st;
      const bool smallest = argc == 9 && std::string(argv[8]) == "smallest";
      load_setup(st, argv[2], argv[3], argv[4], smallest);
      return sass(st, argv[5], size_t(std::stoul(argv[6])), std::string(argv[7]) + (smallest ? "@smallest" : ""));
    }
    std::fprintf(stderr, "usage: counter_probe info | hw TASK MANIFEST CUBIN LABEL | sass TASK MANIFEST CUBIN LISTING LAUNCH LABEL [smallest]\n");
    return 2;
  } catch (const std::exception& e) {
    std::printf("PROBE FAILED: %s\n", e.what());
    return 1;
  }
}
