// check_manifest_bounds: every resource a manifest asks for, against a bound
// derived from the task (its tensors' bytes at each size, its architecture).
// A manifest past a bound fails the format stage, naming the bound, before
// anything is allocated or launched: no request of a candidate can make the
// harness itself fail (docs/decisions.md, "Paths to error").
#include <cstdio>
#include <optional>
#include <set>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/api/manifest.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {
namespace {

std::string bytes_text(double b) {
  char buf[48];
  if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else std::snprintf(buf, sizeof buf, "%.0f bytes", b);
  return buf;
}

// " at size M=..." for public sizes; a hidden size by its label, never its values.
std::string where(const task& t, const size_point& s) { return " " + at_size(size_label(t, s)); }

// The value of `expr` at `s`, or nullopt (an expression problem is reported elsewhere).
std::optional<int64_t> value(const std::string& expr, const std::map<std::string, int64_t>& names) {
  try {
    return eval_int(expr, names);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void check_scratch(const manifest& m, const task& t, const size_point& s, std::vector<std::string>& problems) {
  const auto names = size_values(s);
  double total = 0;
  std::string each;
  for (const auto& sc : m.scratch) {
    auto v = value(sc.bytes, names);
    if (!v) continue;
    total += double(*v);
    each += (each.empty() ? "" : ", ") + sc.name + " " + bytes_text(double(*v));
  }
  const double bound = max_scratch_bytes(t, s);
  if (total > bound)
    problems.push_back("scratch buffers ask for " + bytes_text(total) + where(t, s) + " (" + each + "); the bound is " +
                       std::to_string(int(k_max_scratch_factor)) + " x the task's tensor bytes at that size + " +
                       bytes_text(double(k_scratch_slack_bytes)) + " = " + bytes_text(bound));
}

void check_launch(const launch_spec& l, size_t index, const task& t, const size_point& s,
                  std::vector<std::string>& problems) {
  const auto names = size_values(s);
  const std::string who = "launch " + std::to_string(index) + " (" + l.kernel + ")";
  static const int64_t grid_max[3] = {2147483647LL, 65535, 65535};
  static const int64_t block_max[3] = {1024, 1024, 64};
  int64_t threads = 1, cluster = 1;
  const char* axes = "xyz";
  for (int d = 0; d < 3; ++d) {
    auto g = value(l.grid[d], names), b = value(l.block[d], names), c = value(l.cluster[d], names);
    if (g && *g > grid_max[d])
      problems.push_back(who + " grid." + axes[d] + " = " + std::to_string(*g) + where(t, s) + "; at most " +
                         std::to_string(grid_max[d]));
    if (b && *b > block_max[d])
      problems.push_back(who + " block." + axes[d] + " = " + std::to_string(*b) + "; at most " +
                         std::to_string(block_max[d]));
    if (b && *b > 0) threads *= *b;
    if (c && *c > 0) cluster *= *c;
    if (g && c && *c > 0 && *g % *c != 0)
      problems.push_back(who + " grid." + axes[d] + where(t, s) + " is not a multiple of cluster." + axes[d] + " (" +
                         std::to_string(*c) + ")");
  }
  if (threads > k_max_block_threads)
    problems.push_back(who + " block of " + std::to_string(threads) + " threads; a block has at most " +
                       std::to_string(k_max_block_threads));
  if (cluster > k_max_cluster_ctas)
    problems.push_back(who + " cluster of " + std::to_string(cluster) + " CTAs; at most " +
                       std::to_string(k_max_cluster_ctas));
  const int64_t shared_max = max_shared_bytes_per_block(t.arch);
  if (auto sh = value(l.shared_bytes, names); sh && *sh > shared_max)
    problems.push_back(who + " asks for " + std::to_string(*sh) + " bytes of dynamic shared memory" + where(t, s) +
                       "; " + t.arch + " allows at most " + std::to_string(shared_max) + " bytes of shared memory per block");
}

// The tensor maps cuTensorMapEncodeTiled can encode: rank 1..5, box dims
// 1..256, global strides multiples of 16 bytes below 2^40, dims below 2^32.
void check_tensor_map(const param_binding& b, const std::string& who, const task& t, const size_point& s,
                      std::vector<std::string>& problems) {
  const tensor_spec* ts = t.find_tensor(b.map.tensor);
  if (!ts) return;  // named by check_manifest_against_task
  if (b.map.box.empty() || b.map.box.size() > 5) {
    problems.push_back(who + ": a tensor map has 1 to 5 dimensions (box has " + std::to_string(b.map.box.size()) + ")");
    return;
  }
  for (int64_t d : b.map.box)
    if (d < 1 || d > 256) {
      problems.push_back(who + ": tensor map box dimensions must be 1 to 256 (box has " + std::to_string(d) + ")");
      return;
    }
  const auto names = size_values(s);
  std::vector<int64_t> dims;  // outermost first
  for (const auto& e : b.map.view.empty() ? ts->shape : b.map.view) {
    auto v = value(e, names);
    if (!v) return;
    dims.push_back(*v);
  }
  double stride = dtype_bytes(ts->type);
  for (size_t i = dims.size(); i-- > 0;) {
    if (double(dims[i]) >= 4294967296.0) {
      problems.push_back(who + ": tensor map of " + ts->name + where(t, s) + " has a dimension of 2^32 elements or more");
      return;
    }
    if (i + 1 < dims.size() && (int64_t(stride) % 16 != 0 || stride >= 1099511627776.0)) {
      problems.push_back(who + ": tensor map of " + ts->name + where(t, s) + ": a row stride of " +
                         std::to_string(int64_t(stride)) +
                         " bytes; TMA needs strides that are multiples of 16 bytes (below 2^40)");
      return;
    }
    stride *= double(dims[i]);
  }
}

}  // namespace

double task_tensor_bytes(const task& t, const size_point& s) {
  double bytes = 0;
  for (const auto& ts : t.tensors) bytes += double(tensor_elements(ts, s)) * dtype_bytes(ts.type);
  return bytes;
}

double max_scratch_bytes(const task& t, const size_point& s) {
  return k_max_scratch_factor * task_tensor_bytes(t, s) + double(k_scratch_slack_bytes);
}

int64_t max_shared_bytes_per_block(const std::string& arch) {
  // The opt-in limit of each architecture (CUDA programming guide, compute capabilities).
  if (arch.rfind("sm_80", 0) == 0 || arch.rfind("sm_87", 0) == 0) return 166912;
  if (arch.rfind("sm_86", 0) == 0 || arch.rfind("sm_89", 0) == 0 || arch.rfind("sm_12", 0) == 0) return 101376;
  return 232448;  // sm_90, sm_100, sm_103: 227 KB
}

std::vector<std::string> check_manifest_bounds(const manifest& m, const task& t) {
  std::vector<std::string> problems;
  if (m.launches.size() > k_max_candidate_launches)
    problems.push_back("the manifest has " + std::to_string(m.launches.size()) + " launches; at most " +
                       std::to_string(k_max_candidate_launches));
  std::set<std::string> seen;
  for (const auto& s : t.sizes) {
    std::vector<std::string> here;
    check_scratch(m, t, s, here);
    for (size_t i = 0; i < m.launches.size(); ++i) {
      check_launch(m.launches[i], i, t, s, here);
      for (size_t p = 0; p < m.launches[i].params.size(); ++p)
        if (m.launches[i].params[p].kind == binding_kind::tensor_map)
          check_tensor_map(m.launches[i].params[p],
                           "launch " + std::to_string(i) + " (" + m.launches[i].kernel + ") param " + std::to_string(p),
                           t, s, here);
    }
    for (auto& p : here)
      if (seen.insert(p).second) problems.push_back(std::move(p));
  }
  return problems;
}

}  // namespace ptxbench
