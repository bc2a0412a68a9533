// The SASS -> PTX line map of a cubin compiled from add_line_info's copy:
// nvdisasm -gi prints the line table as `//## File "...", line N` markers
// before the instructions they cover (the form the PC-sampling probe on the
// H200 was mapped with).
#include <chrono>
#include <future>
#include <string_view>

#include "evaluator/compile/compile_backends.hpp"
#include "evaluator/compile/line_info.hpp"
#include "evaluator/compile/sass_dataflow.hpp"
#include "evaluator/compile/ptx_text.hpp"
#include "evaluator/compile/subprocess.hpp"

namespace ptxbench {

int sass_line_map::line_of(const std::string& function, uint64_t offset) const {
  const auto f = lines.find(function);
  if (f == lines.end()) return 0;
  const auto at = f->second.find(offset);
  return at == f->second.end() ? 0 : at->second;
}

int sass_line_map::awaited_line_of(const std::string& function, uint64_t offset) const {
  const auto f = awaited.find(function);
  if (f == awaited.end()) return 0;
  const auto at = f->second.find(offset);
  return at == f->second.end() ? 0 : at->second;
}

bool sass_line_map::awaits_local_load(const std::string& function, uint64_t offset) const {
  const auto f = awaits_local.find(function);
  return f != awaits_local.end() && f->second.count(offset) > 0;
}

size_t sass_line_map::size() const {
  size_t n = 0;
  for (const auto& [name, offsets] : lines) n += offsets.size();
  return n;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "\t.section\t.text.<name>,\"ax\",@progbits" -> name; "" otherwise.
std::string text_section(std::string_view line) {
  line = trim(line);
  if (line.substr(0, 8) != ".section") return "";
  line = trim(line.substr(8));
  if (line.substr(0, 6) != ".text.") return "";
  line.remove_prefix(6);
  const size_t end = line.find_first_of(", \t");
  return std::string(line.substr(0, end));
}

// `//## File "<file>", line N ...` -> N when <file> is `file_name`, 0 for
// another file, -1 when the line is no marker.
int file_marker(std::string_view line, const std::string& file_name) {
  line = trim(line);
  constexpr std::string_view prefix = "//## File \"";
  if (line.substr(0, prefix.size()) != prefix) return -1;
  line.remove_prefix(prefix.size());
  const size_t quote = line.find('"');
  if (quote == std::string_view::npos) return 0;
  const bool ours = line.substr(0, quote) == file_name;
  line.remove_prefix(quote + 1);
  constexpr std::string_view tag = ", line ";
  if (line.substr(0, tag.size()) != tag) return 0;
  line.remove_prefix(tag.size());
  long n = 0;
  size_t digits = 0;
  while (digits < line.size() && digits < 9 && line[digits] >= '0' && line[digits] <= '9')
    n = n * 10 + (line[digits++] - '0');
  return ours && digits > 0 ? int(n) : 0;
}

// "/*0a40*/ ..." -> 0xa40; false otherwise.
bool instruction_offset(std::string_view line, uint64_t& offset) {
  line = trim(line);
  if (line.substr(0, 2) != "/*") return false;
  const size_t close = line.find("*/");
  if (close == std::string_view::npos || close < 3 || close > 18) return false;
  offset = 0;
  for (size_t i = 2; i < close; ++i) {
    const char c = line[i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) return false;
    offset = offset * 16 + uint64_t(v);
  }
  return true;
}

// ".L_x_6:" -> ".L_x_6"; "" otherwise.
std::string_view label_of(std::string_view line) {
  line = trim(line);
  if (line.size() < 2 || line.back() != ':' || line.substr(0, 2) != ".L") return "";
  return line.substr(0, line.size() - 1);
}

// One function's instructions as the listing prints them, for
// place_barrier_waits.
struct listed {
  uint64_t offset;
  std::string_view text;  // after the offset comment
};

// "@!P0 BRA `(.L_x_6) ;" -> {"P0", ".L_x_6"}; empty when not a predicated branch.
std::pair<std::string_view, std::string_view> predicated_branch(std::string_view t) {
  t = trim(t);
  if (t.substr(0, 2) != "@!" && t.substr(0, 1) != "@") return {};
  const size_t space = t.find(' ');
  if (space == std::string_view::npos) return {};
  std::string_view pred = t.substr(t[1] == '!' ? 2 : 1, space - (t[1] == '!' ? 2 : 1));
  std::string_view rest = trim(t.substr(space));
  if (rest.substr(0, 3) != "BRA") return {};
  const size_t open = rest.find("(.L"), close = rest.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
  return {pred, rest.substr(open + 1, close - open - 1)};
}

// ptxas turns an `mbarrier.try_wait` retry loop into a first SYNCS.PHASECHK
// in line followed by `@!P BRA` to a retry loop at the function's end, and
// gives the in-line pair no line-table row of its own: they inherit the row of
// the instruction before them (seen with ptxas 13.0 on every mbarrier
// solution, a `.loc` before the try_wait notwithstanding), while the retry
// loop carries the try_wait's line. The in-line pair, where a waiting warp is
// sampled, takes the retry loop's line. Returns how many were moved.
int place_barrier_waits(std::map<uint64_t, int>& lines, const std::vector<listed>& code,
                        const std::map<std::string_view, uint64_t>& labels) {
  std::map<uint64_t, size_t> index;
  for (size_t i = 0; i < code.size(); ++i) index[code[i].offset] = i;
  const auto is_wait = [&](size_t i) { return trim(code[i].text).substr(0, 14) == "SYNCS.PHASECHK"; };
  int moved = 0;
  for (size_t b = 0; b < code.size(); ++b) {
    const auto [pred, target] = predicated_branch(code[b].text);
    if (target.empty()) continue;
    const auto at = labels.find(target);
    if (at == labels.end() || !index.count(at->second) || index.at(at->second) <= b) continue;  // forward only
    // The in-line PHASECHK that sets this predicate, the nearest before it
    // (ptxas may schedule up to a few dozen instructions between them).
    size_t first = b;
    for (size_t k = b; k-- > 0 && b - k <= 32;) {
      const std::string_view t = trim(code[k].text);
      const size_t space = t.find(' ');
      if (is_wait(k) && space != std::string_view::npos &&
          trim(t.substr(space)).substr(0, pred.size() + 1) == std::string(pred) + ",") {
        first = k;
        break;
      }
    }
    if (first == b) continue;
    // Its retry: the same PHASECHK a few instructions after the branch's label.
    const size_t from = index.at(at->second);
    for (size_t r = from; r < code.size() && r <= from + 6; ++r) {
      if (!is_wait(r) || trim(code[r].text) != trim(code[first].text) || !lines.count(code[r].offset)) continue;
      const int line = lines.at(code[r].offset);
      for (const size_t i : {first, b})
        if (lines.count(code[i].offset) && lines[code[i].offset] != line) lines[code[i].offset] = line, ++moved;
      break;
    }
  }
  return moved;
}

}  // namespace

sass_line_map parse_nvdisasm_line_info(const std::string& text, const std::string& file_name) {
  sass_line_map map;
  std::string function;
  int current = 0;
  std::vector<listed> code;
  std::map<std::string_view, uint64_t> labels;
  std::vector<std::string_view> pending;  // labels before the next instruction
  const auto finish = [&] {
    if (!function.empty() && map.lines.count(function))
      map.placed_by_order += place_barrier_waits(map.lines[function], code, labels);
    code.clear();
    labels.clear();
    pending.clear();
  };
  for (std::string_view line : ptx_text::split_lines(text)) {
    if (std::string name = text_section(line); !name.empty()) {
      finish();
      function = std::move(name);
      current = 0;
      continue;
    }
    if (const int marker = file_marker(line, file_name); marker >= 0) {
      current = marker;
      continue;
    }
    if (const std::string_view label = label_of(line); !label.empty()) {
      pending.push_back(label);
      continue;
    }
    uint64_t offset = 0;
    if (function.empty() || !instruction_offset(line, offset)) continue;
    for (const std::string_view l : pending) labels[l] = offset;
    pending.clear();
    const std::string_view t = trim(line);
    code.push_back({offset, t.substr(std::min(t.size(), t.find("*/") + 2))});
    if (current > 0) map.lines[function][offset] = current;
  }
  finish();
  map.available = !map.lines.empty();
  if (!map.available) map.error = "the disassembly has no line table for " + file_name;
  return map;
}

sass_line_map sass_line_map_of(const std::vector<char>& cubin) {
  sass_line_map map;
  const std::string nvdisasm = nvdisasm_path();
  if (nvdisasm.empty()) {
    map.error = "nvdisasm not found (set PTXBENCH_NVDISASM)";
    return map;
  }
  temp_file file("ptxbench-lines-", ".cubin");
  if (!file.ok() || !file.write(cubin.data(), cubin.size())) {
    map.error = "could not write the cubin to a temporary file";
    return map;
  }
  const process_result run = run_process({nvdisasm, "-gi", "-c", file.path()}, 60000);
  if (!run.ran || run.exit_code != 0) {
    map.error = !run.ran ? "nvdisasm: " + run.failure : "nvdisasm -gi failed: " + run.err.substr(0, run.err.find('\n'));
    return map;
  }
  return parse_nvdisasm_line_info(run.out);
}

namespace {

// ptxas gives a warpgroup MMA (HGMMA/QGMMA/IGMMA) no line-table row of its
// own: it inherits the row of the instruction before it, a descriptor's
// arithmetic a few lines away (seen with ptxas 13.0 on every wgmma solution,
// while mma.sync's HMMA and ldmatrix's LDSM map exactly). In program order
// they follow their wgmma.mma_async lines one to one wherever the counts agree
// (each solution's listing checked), so they are paired in order per function;
// where the counts differ, each goes to the nearest wgmma line at or before
// its inherited one. Returns how many were moved.
int place_warpgroup_mmas(sass_line_map& map, const std::vector<sass_instruction>& listing, const std::string& ptx) {
  const std::string blanked = ptx_text::blank_comments_and_strings(ptx);
  const std::vector<std::string_view> src = ptx_text::split_lines(blanked);
  std::vector<int> wgmma_lines;
  for (size_t n = 0; n < src.size(); ++n)
    if (src[n].find("wgmma.mma_async") != std::string_view::npos) wgmma_lines.push_back(int(n + 1));
  std::map<std::string, std::vector<const sass_instruction*>> mmas;
  for (const sass_instruction& inst : listing)
    if ((inst.opcode == "HGMMA" || inst.opcode == "QGMMA" || inst.opcode == "IGMMA") && map.line_of(inst.function, inst.offset) > 0 &&
        sass_instruction_flops(inst) > 0)
      mmas[inst.function].push_back(&inst);
  const std::vector<ptx_entry> entries = parse_ptx_entries(ptx);
  int moved = 0;
  for (const auto& [function, insts] : mmas) {
    int from = 1, to = int(src.size());
    for (size_t e = 0; e < entries.size(); ++e)
      if (entries[e].name == function) {
        from = entries[e].line;
        to = e + 1 < entries.size() ? entries[e + 1].line - 1 : int(src.size());
      }
    std::vector<int> own;
    for (int l : wgmma_lines)
      if (l >= from && l <= to) own.push_back(l);
    if (own.empty()) continue;
    for (size_t i = 0; i < insts.size(); ++i) {
      int& line = map.lines[function][insts[i]->offset];
      int placed = own.front();
      if (own.size() == insts.size()) {
        placed = own[i];
      } else {
        for (int l : own)
          if (l <= line) placed = l;
      }
      moved += placed != line;
      line = placed;
    }
  }
  return moved;
}

}  // namespace

line_mapped_module compile_line_info_copy(const std::string& ptx, const std::string& arch) {
  line_mapped_module out;
  const line_annotated_ptx annotated = add_line_info(ptx);
  if (!annotated.problem.empty()) {
    out.problem = annotated.problem;
    return out;
  }
  const auto start = std::chrono::steady_clock::now();
  compiled_module& c = out.compiled;
  c.report.arch = arch;
  if (automatic_backend() == compiler_backend::ptxas && !ptxas_path().empty()) {
    c.report.log = "compiler: ptxas (whole program, line info) -arch=" + arch + "\n";
    compile_with_ptxas(annotated.ptx, arch, ptxas_path(), c, true);
  } else {
    c.report.log = "compiler: nvJitLink (relocatable, line info) -arch=" + arch + "\n";
    compile_with_nvjitlink(annotated.ptx, arch, c, true);
  }
  c.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!c.ok)
    out.problem = "the copy with line info did not compile: " +
                  (c.evaluator_error.empty() ? c.report.log.substr(0, 400) : c.evaluator_error);
  return out;
}

void map_line_info(line_mapped_module& lm, const std::string& ptx) {
  if (!lm.compiled.ok || !lm.problem.empty()) return;
  // The line table and the listing are two nvdisasm runs of ~0.5 s each: side by side.
  auto map = std::async(std::launch::async, [&cubin = lm.compiled.cubin] { return sass_line_map_of(cubin); });
  const sass_listing listing = disassemble(lm.compiled.cubin);
  lm.map = map.get();
  if (!lm.map.available) {
    lm.problem = lm.map.error;
    return;
  }
  if (!listing.available) return;
  lm.map.placed_by_order += place_warpgroup_mmas(lm.map, listing.instructions, ptx);
  std::map<std::string, std::set<uint64_t>> local_loads;
  for (const auto& inst : listing.instructions)
    if (inst.opcode == "LDL") local_loads[inst.function].insert(inst.offset);
  for (const auto& [function, waits] : awaited_loads(listing.instructions))
    for (const auto& [consumer, producer] : waits)
      if (const int line = lm.map.line_of(function, producer); line > 0) {
        lm.map.awaited[function][consumer] = line;
        if (const auto f = local_loads.find(function); f != local_loads.end() && f->second.count(producer))
          lm.map.awaits_local[function].insert(consumer);
      }
}

line_mapped_module compile_with_line_info(const std::string& ptx, const std::string& arch) {
  line_mapped_module out = compile_line_info_copy(ptx, arch);
  map_line_info(out, ptx);
  return out;
}

}  // namespace ptxbench
