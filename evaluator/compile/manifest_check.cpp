// check_manifest_against_ptx: the launch manifest against the kernels' real
// parameter lists, before anything runs. A mismatch here would otherwise
// surface as a garbage argument or an illegal address on the GPU, which tells
// the model nothing; each message names the launch, the parameter and the fix.
#include <charconv>
#include <cstdint>
#include <limits>
#include <sstream>

#include "evaluator/compile/compile.hpp"

namespace ptxbench {
namespace {

bool is_integer_type(const std::string& type) {
  return type.size() > 2 && (type[1] == 'u' || type[1] == 's' || type[1] == 'b');
}
bool is_float_type(const std::string& type) { return type == ".f32" || type == ".f64"; }

// ".u32 (4 bytes)" or ".b8 x[128] (.align 64)": how the parameter is declared.
std::string describe(const ptx_param& p) {
  std::ostringstream out;
  if (p.array_length > 0) {
    out << ".align " << p.align << ' ' << p.type << ' ' << p.name << '[' << p.array_length << ']';
  } else {
    out << p.type << " (" << p.size_bytes << " bytes)";
  }
  return out.str();
}

std::string describe_binding(const param_binding& b) {
  switch (b.kind) {
    case binding_kind::buffer: return "buffer " + b.name;
    case binding_kind::size: return "size " + b.name;
    case binding_kind::scalar: return "scalar " + b.name;
    case binding_kind::tensor_map: return "tensor_map " + b.map.tensor;
    case binding_kind::constant: return "const";
  }
  return "?";
}

// The largest value size `name` takes over the task's size grid.
int64_t largest_size(const task& t, const std::string& name) {
  int64_t largest = 0;
  for (const size_point& s : t.sizes) {
    if (auto it = s.values.find(name); it != s.values.end()) largest = std::max(largest, it->second);
  }
  return largest;
}

// Why `p` cannot take binding `b`, or "" when it can.
std::string param_problem(const ptx_param& p, const param_binding& b, const task& t) {
  const bool scalar_param = p.array_length == 0;
  switch (b.kind) {
    case binding_kind::buffer:
      if (scalar_param && p.size_bytes == 8 && is_integer_type(p.type)) return "";
      return "which is a device address and needs .param .u64 " + p.name;
    case binding_kind::size:
      if (scalar_param && (p.size_bytes == 4 || p.size_bytes == 8) && is_integer_type(p.type)) {
        if (p.size_bytes == 4 && largest_size(t, b.name) > std::numeric_limits<int32_t>::max()) {
          return "which reaches " + std::to_string(largest_size(t, b.name)) + " and needs .param .u64 " + p.name;
        }
        return "";
      }
      return "which is an integer and needs .param .u32 " + p.name + " (or .u64)";
    case binding_kind::scalar:
      if (scalar_param && p.size_bytes == 4 && (p.type == ".f32" || p.type == ".b32")) return "";
      return "which is written as an fp32 value and needs .param .f32 " + p.name;
    case binding_kind::tensor_map:
      if (!scalar_param && p.size_bytes == 128 && p.align >= 64 && p.align % 64 == 0) return "";
      return "which is a CUtensorMap passed by value and needs .param .align 64 .b8 " + p.name + "[128]";
    case binding_kind::constant:
      if (!scalar_param || p.size_bytes > 8 || p.size_bytes == 0) {
        return "which is a literal and needs a scalar parameter of at most 8 bytes";
      }
      if (b.const_is_float && !(is_float_type(p.type) || p.type == ".b32" || p.type == ".b64")) {
        return "which is a floating-point literal and needs .param .f32 " + p.name + " (or .f64)";
      }
      return "";
  }
  return "";
}

std::optional<int64_t> literal(const std::string& text) {
  int64_t value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// Compares a literal launch shape with a `.reqntid`/`.maxntid`-style directive.
void check_shape_directive(const ptx_entry& entry, const std::array<std::string, 3>& shape,
                           const std::string& directive, const std::string& what, bool exact, const std::string& prefix,
                           std::vector<std::string>& problems) {
  auto it = entry.directives.find(directive);
  if (it == entry.directives.end()) return;
  int64_t launch_total = 1;
  for (const std::string& s : shape) {
    auto v = literal(s);
    if (!v) return;  // an expression: checked at launch time
    // A model's literal may overflow: such a shape fails at launch, not here.
    if (__builtin_mul_overflow(launch_total, *v, &launch_total)) return;
  }
  int64_t declared_total = 1;
  std::istringstream in(it->second);
  std::string part;
  while (std::getline(in, part, ',')) {
    auto v = literal(part);
    if (!v) return;
    if (__builtin_mul_overflow(declared_total, *v, &declared_total)) return;
  }
  const bool ok = exact ? launch_total == declared_total : launch_total <= declared_total;
  if (!ok) {
    problems.push_back(prefix + what + " [" + shape[0] + ", " + shape[1] + ", " + shape[2] + "] has " +
                       std::to_string(launch_total) +
                       (exact ? " but the kernel declares " : " but the kernel allows at most ") + directive + " " +
                       it->second + " (" + std::to_string(declared_total) + ")");
  }
}

}  // namespace

std::vector<std::string> check_manifest_against_ptx(const manifest& m, const std::vector<ptx_entry>& entries,
                                                    const task& t) {
  std::vector<std::string> problems;
  if (entries.empty()) {
    problems.push_back("the PTX declares no .entry kernel (write `.visible .entry name(...)`)");
    return problems;
  }
  std::string entry_names;
  // Named in full up to a screenful: a module of thousands of entries must not
  // make every problem line megabytes long.
  constexpr size_t named_entries = 20;
  for (size_t i = 0; i < entries.size() && i < named_entries; ++i)
    entry_names += (entry_names.empty() ? "" : ", ") + entries[i].name;
  if (entries.size() > named_entries)
    entry_names += " and " + std::to_string(entries.size() - named_entries) + " more";
  for (size_t i = 0; i < m.launches.size(); ++i) {
    const launch_spec& launch = m.launches[i];
    const std::string prefix = "launch " + std::to_string(i) + " (" + launch.kernel + "): ";
    const ptx_entry* entry = nullptr;
    for (const ptx_entry& e : entries) {
      if (e.name == launch.kernel) entry = &e;
    }
    if (!entry) {
      problems.push_back(prefix + "no .entry named '" + launch.kernel +
                         "' in the PTX; its entries are: " + entry_names);
      continue;
    }
    if (entry->params.size() != launch.params.size()) {
      std::string declared;
      for (size_t k = 0; k < entry->params.size(); ++k) {
        declared +=
            (k ? ", " : "") + std::to_string(k) + " '" + entry->params[k].name + "' " + describe(entry->params[k]);
      }
      problems.push_back(prefix + "the manifest binds " + std::to_string(launch.params.size()) + " params but .entry " +
                         entry->name + " (line " + std::to_string(entry->line) + ") declares " +
                         std::to_string(entry->params.size()) + (declared.empty() ? "" : ": " + declared) +
                         "; bind every parameter in order (use {\"const\": 0} for one the kernel ignores)");
      continue;
    }
    for (size_t k = 0; k < entry->params.size(); ++k) {
      const ptx_param& p = entry->params[k];
      const std::string why = param_problem(p, launch.params[k], t);
      if (why.empty()) continue;
      problems.push_back(prefix + "param " + std::to_string(k) + " '" + p.name + "' is " + describe(p) + " but binds " +
                         describe_binding(launch.params[k]) + ", " + why);
    }
    check_shape_directive(*entry, launch.block, ".reqntid", "block", true, prefix, problems);
    check_shape_directive(*entry, launch.block, ".maxntid", "block", false, prefix, problems);
    check_shape_directive(*entry, launch.cluster, ".reqnctapercluster", "cluster", true, prefix, problems);
  }
  return problems;
}

}  // namespace ptxbench
