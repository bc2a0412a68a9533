// Device probe for the GPU libraries: correctness and speed of the cuBLASLt
// GEMM and cuDNN attention baselines at the timed task sizes, and CUPTI's
// executed-instruction counts joined with nvdisasm's listing of the same
// cubin. Usage: ptxbench_gpu_libs_probe OUT_DIR  (writes loop.cubin,
// loop_counts.txt there; prints a summary; exit 0 when every check passed).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "evaluator/baselines/baselines.hpp"
#include "evaluator/baselines/cuda_check.hpp"
#include "evaluator/baselines/cudnn_api.hpp"
#include "evaluator/profile/sass_counter.hpp"
#include "tests/baselines/attention_check.hpp"
#include "tests/baselines/loop_kernel.hpp"
#include "tests/baselines/reference.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;

namespace {

int failures = 0;
std::vector<std::string> summary;

void record(const std::string& line, bool ok) {
  summary.push_back(std::string(ok ? "PASS " : "FAIL ") + line);
  if (!ok) ++failures;
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", line.c_str());
  std::fflush(stdout);
}

double since_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void probe_gemm(dtype input, dtype output, int64_t size) {
  const int64_t M = size, N = size, K = size;
  gpu& g = the_gpu();
  const size_t in_bytes = static_cast<size_t>(M * K) * dtype_bytes(input);
  device_memory a(in_bytes), b(in_bytes), c(static_cast<size_t>(M * N) * 2);
  std::vector<float> av, bv;
  if (input == dtype::fp8_e4m3) {
    auto ad = random_fp8(static_cast<size_t>(M * K), 31, 4.0f), bd = random_fp8(static_cast<size_t>(N * K), 32, 4.0f);
    a.upload(ad.bits.data());
    b.upload(bd.bits.data());
    av = std::move(ad.values);
    bv = std::move(bd.values);
  } else {
    const bool half = input == dtype::fp16;
    auto ad = half ? random_fp16(static_cast<size_t>(M * K), 41, -1.0f, 1.0f) : random_bf16(static_cast<size_t>(M * K), 41, -1.0f, 1.0f);
    auto bd = half ? random_fp16(static_cast<size_t>(N * K), 42, -1.0f, 1.0f) : random_bf16(static_cast<size_t>(N * K), 42, -1.0f, 1.0f);
    a.upload(ad.bits.data());
    b.upload(bd.bits.data());
    av = std::move(ad.values);
    bv = std::move(bd.values);
  }
  const auto start = std::chrono::steady_clock::now();
  auto base = make_gemm_baseline(gemm_task(input, output), sizes({{"M", M}, {"N", N}, {"K", K}}),
                                 baseline_buffers{{{"A", a.ptr()}, {"B", b.ptr()}, {"C", c.ptr()}}}, g.stream);
  const double setup_ms = since_ms(start);
  const std::string label = std::string("gemm ") + to_string(input) + " " + std::to_string(size) + "^3";
  if (!base->available()) return record(label + ": unavailable: " + base->why_not(), false);
  c.fill_bytes(0xff);
  base->run(g.stream);
  check(cuStreamSynchronize(g.stream), "sync");
  std::vector<uint16_t> bits(static_cast<size_t>(M * N));
  c.download(bits.data());
  std::vector<float> out;
  std::vector<double> ref;
  for (int64_t t = 0; t < 4096; ++t) {
    const int64_t i = (t * 7919 + 3) % M, j = (t * 104729 + 11) % N;
    const uint16_t v = bits[static_cast<size_t>(i * N + j)];
    out.push_back(output == dtype::fp16 ? fp16_to_float(v) : bf16_to_float(v));
    ref.push_back(gemm_element(av.data(), bv.data(), K, i, j));
  }
  const comparison cmp = compare(out, ref, 0.004, 0.01);
  const double ms = baselines_detail::median_time_ms(g.stream, [&] { base->run(g.stream); }, 3, 20);
  const double tflops = 2.0 * M * N * K / (ms * 1e-3) / 1e12;
  std::ostringstream s;
  s << label << ": " << base->name() << "; setup " << setup_ms << " ms; median " << ms << " ms = " << tflops
    << " TFLOP/s; sampled check " << cmp.summary();
  record(s.str(), cmp.mismatches == 0);
}

void probe_attention(bool backward, bool causal) {
  attention_check_options o;
  o.b = 4;
  o.h = 16;
  o.s = 4096;
  o.d = 128;
  o.causal = causal;
  o.sampled_rows = 48;
  o.timed_runs = 10;
  const attention_check_result r = backward ? check_attention_backward(o) : check_attention_forward(o);
  const double flops = (backward ? 10.0 : 4.0) * o.b * o.h * o.s * o.s * o.d * (causal ? 0.5 : 1.0);
  std::ostringstream s;
  s << "attention " << (backward ? "bwd" : "fwd") << (causal ? " causal" : "") << " B4 H16 S4096 D128: " << r.summary()
    << "\n  setup " << r.setup_ms << " ms; median " << r.time_ms << " ms = "
    << (r.time_ms > 0 ? flops / (r.time_ms * 1e-3) / 1e12 : 0.0) << " TFLOP/s";
  record(s.str(), r.passed());
}

// nvdisasm's listing of a cubin: function-relative offset -> instruction text, per function.
std::map<std::string, std::map<uint64_t, std::string>> disassemble(const std::string& cubin_path) {
  std::map<std::string, std::map<uint64_t, std::string>> listing;
  const char* tool = std::getenv("NVDISASM");
  const std::string cmd = std::string(tool ? tool : "nvdisasm") + " -c " + cubin_path + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return listing;
  char line[1024];
  std::string function;
  while (fgets(line, sizeof(line), pipe)) {
    std::string l(line);
    if (auto f = l.find(".text."); f != std::string::npos && l.find(':') != std::string::npos && l.find("/*") == std::string::npos) {
      function = l.substr(f + 6, l.find(':', f) - f - 6);
      continue;
    }
    const auto open = l.find("/*"), close = l.find("*/");
    if (open == std::string::npos || close == std::string::npos || close - open > 10) continue;
    const uint64_t offset = std::stoull(l.substr(open + 2, close - open - 2), nullptr, 16);
    std::string text = l.substr(close + 2);
    text = text.substr(text.find_first_not_of(" \t"));
    if (auto semi = text.find(';'); semi != std::string::npos) text = text.substr(0, semi);
    listing[function][offset] = text;
  }
  pclose(pipe);
  return listing;
}

void probe_cupti(const std::string& out_dir) {
  gpu& g = the_gpu();
  const std::vector<char> cubin = link_loop_kernel();
  const std::string cubin_path = out_dir + "/loop.cubin";
  std::ofstream(cubin_path, std::ios::binary).write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  constexpr unsigned blocks = 132, threads = 128;
  constexpr uint64_t warps = blocks * threads / 32;
  const uint32_t n = 1000;
  device_memory out(blocks * threads * 4);
  loaded_loop_kernel k;
  const auto start = std::chrono::steady_clock::now();
  const sass_count_result r = count_executed_sass(g.context, [&] {
    k = load_loop_kernel(cubin);
    launch_loop_kernel(k, g.stream, out.ptr(), n, blocks, threads);
    check(cuStreamSynchronize(g.stream), "sync");
  });
  const double pass_ms = since_ms(start);
  if (!r.ok) return record("cupti: " + r.error, false);
  const loop_count_classes c = classify_loop_counts(r, warps, warps * n);
  const auto listing = disassemble(cubin_path);
  std::ofstream counts(out_dir + "/loop_counts.txt");
  size_t on_instruction = 0, executed = 0;
  std::string body_ops;
  const auto fn = listing.find(loop_kernel_name);
  for (const auto& pc : r.counts) {
    std::string text = "?";
    if (fn != listing.end())
      if (auto it = fn->second.find(pc.pc_offset); it != fn->second.end()) text = it->second;
    counts << pc.function << " 0x" << std::hex << pc.pc_offset << std::dec << " " << pc.executed << " " << text << "\n";
    if (pc.executed > 0) {
      ++executed;
      if (text != "?") ++on_instruction;
    }
    if (pc.executed == warps * n) body_ops += (body_ops.empty() ? "" : " | ") + text;
  }
  std::ostringstream s;
  s << "cupti loop kernel (" << warps << " warps x " << n << " iterations): " << c.summary() << "; pass " << pass_ms
    << " ms; " << on_instruction << "/" << executed << " executed PCs are nvdisasm instructions ("
    << (fn == listing.end() ? "no nvdisasm listing" : std::to_string(fn->second.size()) + " listed") << "); loop body: " << body_ops;
  record(s.str(), c.exact() && fn != listing.end() && on_instruction == executed);
  cuModuleUnload(k.module);

  // Repeated passes, and whether a kernel stays slower after its pass (patched code kept).
  const loaded_loop_kernel k2 = load_loop_kernel(cubin);
  const auto time_kernel = [&] {
    return baselines_detail::median_time_ms(
        g.stream, [&] { launch_loop_kernel(k2, g.stream, out.ptr(), 20000, blocks, threads); }, 1, 5);
  };
  const double before_ms = time_kernel();
  bool all_exact = true;
  std::string passes;
  for (int pass = 0; pass < 3; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    const sass_count_result rp = count_executed_sass(g.context, [&] {
      launch_loop_kernel(k2, g.stream, out.ptr(), 20000, blocks, threads);
      check(cuStreamSynchronize(g.stream), "sync");
    });
    const double ms = since_ms(t0);
    const loop_count_classes cp = classify_loop_counts(rp, warps, warps * 20000);
    all_exact = all_exact && rp.ok && cp.exact();
    passes += " [pass " + std::to_string(pass) + ": " + (rp.ok ? cp.summary() : rp.error) + ", " + std::to_string(ms) + " ms]";
  }
  const double after_ms = time_kernel();
  std::ostringstream s2;
  s2 << "cupti repeated passes on a module loaded before:" << passes << "; kernel " << before_ms << " ms before, "
     << after_ms << " ms after the passes";
  record(s2.str(), all_exact);
  cuModuleUnload(k2.module);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_dir = argc > 1 ? argv[1] : ".";
  gpu& g = the_gpu();
  if (!g.ok) {
    std::printf("no GPU: %s\n", g.why_not.c_str());
    return 2;
  }
  int driver = 0;
  cuDriverGetVersion(&driver);
  const cudnn::api& dnn = cudnn::load();
  std::printf("device: %s, driver API %d; cuDNN: %s\n", g.name.c_str(), driver,
              dnn.loaded ? (cudnn::version_string(dnn.version) + " from " + dnn.library).c_str() : dnn.error.c_str());
  const auto step = [](const char* what, auto&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      record(std::string(what) + ": exception: " + e.what(), false);
    }
  };
  step("cupti", [&] { probe_cupti(out_dir); });
  step("gemm bf16", [] { probe_gemm(dtype::bf16, dtype::bf16, 4096); });
  step("gemm fp8", [] { probe_gemm(dtype::fp8_e4m3, dtype::bf16, 4096); });
  step("gemm fp16", [] { probe_gemm(dtype::fp16, dtype::fp16, 4096); });
  step("attention fwd", [] { probe_attention(false, false); });
  step("attention fwd causal", [] { probe_attention(false, true); });
  step("attention bwd", [] { probe_attention(true, false); });
  step("attention bwd causal", [] { probe_attention(true, true); });
  std::printf("\n==== summary (%d failed) ====\n", failures);
  for (const auto& l : summary) std::printf("%s\n", l.c_str());
  return failures == 0 ? 0 : 1;
}
