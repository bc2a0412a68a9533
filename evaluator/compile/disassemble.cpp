// disassemble: runs nvdisasm on the cubin in a child process (nvdisasm reads
// only files, so the cubin goes through a private temporary file). The text
// listing without nvdisasm's dataflow analysis (-c -ndf) is read first: it is
// the same listing, and on the H200 machine it cost 0.56-0.65 s per call
// against 0.72-0.83 s for --emit-json (docs/gpu-runs.md, 2026-12-04), most of
// a new candidate's critical path after its compile. --emit-json, then plain
// -c, are the fallbacks for an nvdisasm that refuses -ndf or prints a text
// shape the checked reader does not accept.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/lru_cache.hpp"
#include "evaluator/compile/sass_parse.hpp"
#include "evaluator/compile/subprocess.hpp"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;

constexpr int time_limit_ms = 30000;

// nvidia-cuda-nvdisasm wheels install <site-packages>/nvidia/<cu13|cuda_nvdisasm>/bin/nvdisasm.
std::vector<fs::path> wheel_candidates() {
  std::vector<fs::path> lib_dirs;
  if (const char* home = std::getenv("HOME")) {
    std::error_code ec;
    for (const auto& version : fs::directory_iterator(fs::path(home) / ".pyenv/versions", ec)) {
      lib_dirs.push_back(version.path() / "lib");
    }
    lib_dirs.push_back(fs::path(home) / ".local/lib");
  }
  lib_dirs.push_back("/usr/local/lib");
  lib_dirs.push_back("/usr/lib");
  std::vector<fs::path> out;
  for (const fs::path& lib : lib_dirs) {
    std::error_code ec;
    for (const auto& python : fs::directory_iterator(lib, ec)) {
      if (python.path().filename().string().rfind("python3", 0) != 0) continue;
      for (const char* packages : {"site-packages", "dist-packages"}) {
        std::error_code ec2;
        for (const auto& dist : fs::directory_iterator(python.path() / packages / "nvidia", ec2)) {
          out.push_back(dist.path() / "bin/nvdisasm");
        }
      }
    }
  }
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::string nvdisasm_path() {
  if (const char* configured = std::getenv("PTXBENCH_NVDISASM"); configured && *configured) {
    return find_executable("", {configured}).string();
  }
  const fs::path found =
      find_executable("nvdisasm", {fs::path(PTXBENCH_CUDA_BIN_DIR) / "nvdisasm", "/usr/local/cuda/bin/nvdisasm"});
  if (!found.empty()) return found.string();
  for (const fs::path& candidate : wheel_candidates()) {
    if (!find_executable("", {candidate}).empty()) return candidate.string();
  }
  return "";
}

namespace {

// The disassembly of a cubin seen before (a resubmitted candidate, whose
// compile came from the compile cache): nvdisasm is 0.5-1.4 s of an
// evaluation on the H200. Listings that could be made are kept, bounded like
// the compile cache ($PTXBENCH_COMPILE_CACHE_MB, 0 = off).
lru_cache<sass_listing>& listing_cache() {
  static lru_cache<sass_listing> cache;
  return cache;
}

sass_listing disassemble_uncached(const std::vector<char>& cubin);

}  // namespace

sass_listing disassemble(const std::vector<char>& cubin) {
  const size_t capacity = compile_cache_capacity();
  if (capacity == 0 || cubin.empty()) return disassemble_uncached(cubin);
  std::string key = nvdisasm_path();
  key += '\x1f';
  key.append(cubin.data(), cubin.size());
  if (auto hit = listing_cache().find(key)) return *std::move(hit);
  sass_listing listing = disassemble_uncached(cubin);
  if (listing.available) {
    size_t bytes = 0;
    for (const auto& i : listing.instructions) bytes += 64 + i.function.size() + i.opcode.size() + i.text.size();
    listing_cache().put(key, listing, bytes, capacity);
  }
  return listing;
}

void disassembly_cache_clear() { listing_cache().clear(); }
uint64_t disassembly_cache_hits() { return listing_cache().stats().hits; }

namespace {

sass_listing disassemble_uncached(const std::vector<char>& cubin) {
  sass_listing listing;
  if (cubin.empty()) {
    listing.error = "no cubin to disassemble";
    return listing;
  }
  const std::string nvdisasm = nvdisasm_path();
  if (nvdisasm.empty()) {
    listing.error = "nvdisasm not found (set PTXBENCH_NVDISASM, or install the CUDA toolkit or nvidia-cuda-nvdisasm)";
    return listing;
  }
  temp_file file("ptxbench-", ".cubin");
  if (!file.ok() || !file.write(cubin.data(), cubin.size())) {
    listing.error = "could not write the cubin to a temporary file";
    return listing;
  }
  // The listings nvdisasm gives, the cheapest first; the others for an
  // nvdisasm that refuses -ndf or prints text the checked reader does not take.
  struct listing_kind {
    std::vector<std::string> options;
    const char* source;
    bool json;
  };
  static const listing_kind kinds[] = {{{"-c", "-ndf"}, "nvdisasm -c -ndf", false},
                                       {{"--emit-json"}, "nvdisasm --emit-json", true},
                                       {{"-c"}, "nvdisasm -c", false}};
  std::optional<std::vector<sass_instruction>> parsed;
  std::string failure;
  bool text_read = false;
  for (const listing_kind& kind : kinds) {
    if (!kind.json && text_read) break;  // plain -c prints the text -c -ndf printed
    std::vector<std::string> argv{nvdisasm};
    argv.insert(argv.end(), kind.options.begin(), kind.options.end());
    argv.push_back(file.path());
    const process_result run = run_process(argv, time_limit_ms);
    if (!run.ran || run.exit_code != 0) {
      if (failure.empty()) failure = !run.ran ? run.failure : "nvdisasm failed: " + first_line(run.err);
      if (run.timed_out) break;  // a hung nvdisasm would hang again
      continue;
    }
    text_read = text_read || !kind.json;
    parsed = kind.json ? parse_nvdisasm_json(run.out) : parse_nvdisasm_text_checked(run.out);
    if (parsed) {
      listing.source = kind.source;
      break;
    }
    if (failure.empty()) failure = std::string("nvdisasm's listing (") + kind.source + ") was not understood";
  }
  if (!parsed) {
    listing.error = failure.empty() ? "nvdisasm's listing was not understood" : failure;
    return listing;
  }
  listing.instructions = std::move(*parsed);
  for (const sass_instruction& inst : listing.instructions) ++listing.opcode_counts[inst.opcode];
  listing.available = true;
  return listing;
}

}  // namespace

}  // namespace ptxbench
