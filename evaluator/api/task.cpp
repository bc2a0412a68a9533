#include "evaluator/api/task.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "evaluator/api/expression.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/size_rules.hpp"
#include "evaluator/api/task_family.hpp"

namespace ptxbench {

const char* to_string(dtype t) {
  switch (t) {
    case dtype::bf16: return "bf16";
    case dtype::fp16: return "fp16";
    case dtype::fp8_e4m3: return "fp8_e4m3";
    case dtype::fp32: return "fp32";
    case dtype::i32: return "i32";
  }
  return "?";
}

dtype parse_dtype(const std::string& s) {
  for (dtype t : {dtype::bf16, dtype::fp16, dtype::fp8_e4m3, dtype::fp32, dtype::i32})
    if (s == to_string(t)) return t;
  throw input_error("unknown dtype '" + s + "' (known: bf16, fp16, fp8_e4m3, fp32, i32)");
}

int dtype_bytes(dtype t) {
  switch (t) {
    case dtype::fp8_e4m3: return 1;
    case dtype::bf16:
    case dtype::fp16: return 2;
    case dtype::fp32:
    case dtype::i32: return 4;
  }
  return 0;
}

const tensor_spec* task::find_tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const size_point& task::timed_size() const {
  for (const auto& s : sizes)
    if (s.timed) return s;
  return sizes.front();
}

std::vector<std::string> task::size_names() const {
  std::vector<std::string> names;
  if (!sizes.empty())
    for (const auto& [k, v] : sizes.front().values) names.push_back(k);
  return names;
}

std::vector<size_point> task::public_sizes() const {
  std::vector<size_point> out;
  for (const auto& s : sizes)
    if (!s.hidden) out.push_back(s);
  return out;
}

size_t task::hidden_size_count() const {
  return size_t(std::count_if(sizes.begin(), sizes.end(), [](const size_point& s) { return s.hidden; }));
}

const tolerance& task::tolerance_for(const std::string& tensor) const {
  auto it = tolerances.find(tensor);
  if (it != tolerances.end()) return it->second;
  return tolerances.at("default");
}

namespace {

tolerance parse_tolerance(const json_reader& r) {
  r.expect_object();
  r.reject_unknown({"atol", "rtol", "max_mismatch_fraction", "rel_l2", "max_err_to_scale"});
  tolerance t;
  t.atol = r.get_number("atol");
  t.rtol = r.get_number("rtol");
  t.max_mismatch_fraction = r.get_number("max_mismatch_fraction", 0.0);
  t.rel_l2 = r.get_number("rel_l2", 0.0);
  t.max_err_to_scale = r.get_number("max_err_to_scale", 0.0);
  if (!(t.atol >= 0) || !(t.rtol >= 0) || !(t.max_mismatch_fraction >= 0) || t.max_mismatch_fraction > 1 ||
      !(t.rel_l2 >= 0) || !(t.max_err_to_scale >= 0))
    r.fail("tolerances must be non-negative and max_mismatch_fraction at most 1");
  return t;
}

input_distribution parse_distribution(const json_reader& r) {
  r.expect_object();
  r.reject_unknown({"dist", "scale", "row_scale", "spike_every", "spike_scale"});
  input_distribution d;
  std::string kind = r.get_string("dist", "uniform");
  if (kind == "normal") d.kind = input_distribution::shape::normal;
  else if (kind == "group_offsets") d.kind = input_distribution::shape::group_offsets;
  else if (kind == "cu_seqlens") d.kind = input_distribution::shape::cu_seqlens;
  else if (kind != "uniform") r.fail_key("dist", "must be uniform, normal, group_offsets or cu_seqlens");
  d.scale = r.get_number("scale", 1.0);
  if (!(d.scale > 0 && d.scale <= 1e3)) r.fail_key("scale", "must be in (0, 1000]");
  if (r.has("row_scale")) {
    auto rs = r.at("row_scale");
    rs.expect_array();
    if (rs.json().size() != 2 || !rs.json()[0].is_number() || !rs.json()[1].is_number())
      rs.fail("expected [min, max]");
    d.row_scale_min = rs.json()[0].get<double>();
    d.row_scale_max = rs.json()[1].get<double>();
    if (!(d.row_scale_min > 0 && d.row_scale_min <= d.row_scale_max && d.row_scale_max <= 1e3))
      rs.fail("expected 0 < min <= max <= 1000");
  }
  d.spike_every = r.get_int("spike_every", 0);
  if (d.spike_every < 0) r.fail_key("spike_every", "must be >= 0");
  d.spike_scale = r.get_number("spike_scale", 1.0);
  if (!(d.spike_scale > 0 && d.spike_scale <= 1e3)) r.fail_key("spike_scale", "must be in (0, 1000]");
  return d;
}

nlohmann::json distribution_to_json(const input_distribution& d) {
  const char* kind = d.kind == input_distribution::shape::normal          ? "normal"
                     : d.kind == input_distribution::shape::group_offsets ? "group_offsets"
                     : d.kind == input_distribution::shape::cu_seqlens    ? "cu_seqlens"
                                                                          : "uniform";
  nlohmann::json j = {{"dist", kind}, {"scale", d.scale}};
  if (d.row_scale_min != 1.0 || d.row_scale_max != 1.0) j["row_scale"] = {d.row_scale_min, d.row_scale_max};
  if (d.spike_every > 0) {
    j["spike_every"] = d.spike_every;
    j["spike_scale"] = d.spike_scale;
  }
  return j;
}

// The length of the list or object at `r`, at most `limit`: a task document
// may come from a client (evald), and each entry costs evaluation time.
void bound_entries(const json_reader& r, size_t limit) {
  if (r.json().size() > limit)
    r.fail(std::to_string(r.json().size()) + " entries; the limit is " + std::to_string(limit));
}

// sm_<digits> with an optional a or f suffix: it becomes a compiler option.
bool valid_arch(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return false;
  size_t digits = 0;
  while (3 + digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[3 + digits]))) ++digits;
  const std::string suffix = arch.substr(3 + digits);
  return digits >= 1 && digits <= 4 && (suffix.empty() || suffix == "a" || suffix == "f");
}

std::vector<size_point> parse_sizes(const json_reader& r) {
  r.expect_array();
  if (r.json().empty()) r.fail("a task needs at least one size");
  bound_entries(r, k_max_task_sizes);
  std::vector<size_point> sizes;
  for (size_t i = 0; i < r.json().size(); ++i) {
    auto e = r.at(i);
    e.expect_object();
    bound_entries(e, k_max_task_size_names + 2);  // and "timed", "hidden"
    size_point p;
    for (auto it = e.json().begin(); it != e.json().end(); ++it) {
      if (it.key() == "timed") {
        p.timed = e.get_bool("timed", false);
        continue;
      }
      if (it.key() == "hidden") {
        p.hidden = e.get_bool("hidden", false);
        continue;
      }
      int64_t v = e.get_int(it.key());
      if (v <= 0) e.fail_key(it.key(), "sizes must be positive");
      p.values[it.key()] = v;
    }
    if (!sizes.empty()) {
      for (const auto& [k, v] : sizes.front().values)
        if (!p.values.count(k)) e.fail_key(k, "missing (every size must give the same names)");
      if (p.values.size() != sizes.front().values.size()) e.fail("every size must give the same names");
    }
    if (p.timed && p.hidden) e.fail_key("hidden", "the timed size is shown to the model: it cannot be hidden");
    sizes.push_back(p);
  }
  if (std::all_of(sizes.begin(), sizes.end(), [](const size_point& p) { return p.hidden; }))
    r.fail("a task needs at least one size that is not hidden");
  // A hidden size equal to a shown one hides nothing.
  for (size_t i = 0; i < sizes.size(); ++i)
    for (size_t k = 0; k < sizes.size(); ++k)
      if (i != k && sizes[i].hidden && !sizes[k].hidden && sizes[i].values == sizes[k].values)
        r.at(i).fail("a hidden size equal to the shown size " + std::to_string(k));
  return sizes;
}

task_op parse_op(const json_reader& r) {
  r.expect_object();
  r.reject_unknown({"layout", "epilogue", "batched", "grouped", "scaled", "varlen", "decode", "fp8"});
  task_op op;
  op.layout = r.get_string("layout", "nt");
  if (op.layout != "nt" && op.layout != "nn") r.fail_key("layout", "must be nt or nn");
  op.epilogue = r.get_string("epilogue", "none");
  if (op.epilogue != "none" && op.epilogue != "bias" && op.epilogue != "bias_gelu" && op.epilogue != "alpha_beta")
    r.fail_key("epilogue", "must be none, bias, bias_gelu or alpha_beta");
  op.batched = r.get_bool("batched", false);
  op.grouped = r.get_bool("grouped", false);
  op.scaled = r.get_bool("scaled", false);
  op.varlen = r.get_bool("varlen", false);
  op.decode = r.get_bool("decode", false);
  op.fp8 = r.get_bool("fp8", false);
  return op;
}

nlohmann::json op_to_json(const task_op& op) {
  return {{"layout", op.layout}, {"epilogue", op.epilogue}, {"batched", op.batched}, {"grouped", op.grouped},
          {"scaled", op.scaled},  {"varlen", op.varlen},     {"decode", op.decode},   {"fp8", op.fp8}};
}

// The task's tensors (each named, shaped in size expressions, its role and
// its inputs' distribution), refused when a size makes one overflow.
void parse_tensors(json_reader tensors, const std::map<std::string, int64_t>& names, task& t) {
  tensors.expect_object();
  bound_entries(tensors, k_max_task_tensors);
  for (auto it = tensors.json().begin(); it != tensors.json().end(); ++it) {
    auto e = tensors.at(it.key());
    e.reject_unknown({"dtype", "shape", "role", "init"});
    tensor_spec ts;
    ts.name = it.key();
    try {
      ts.type = parse_dtype(e.get_string("dtype"));
    } catch (const input_error& err) {
      e.fail_key("dtype", err.what());
    }
    bound_entries(e.at("shape"), k_max_tensor_dims);
    ts.shape = e.get_strings("shape");
    if (ts.shape.empty()) e.fail_key("shape", "must have at least one dimension");
    for (size_t i = 0; i < ts.shape.size(); ++i) {
      try {
        check_expression(ts.shape[i], names);
      } catch (const expression_error& err) {
        e.at("shape").at(i).fail(err.what());
      }
    }
    std::string role = e.get_string("role");
    if (role != "input" && role != "output") e.fail_key("role", "must be input or output");
    ts.role = role == "input" ? tensor_role::input : tensor_role::output;
    if (e.has("init")) {
      if (ts.role != tensor_role::input) e.fail_key("init", "only inputs are drawn by the harness");
      ts.init = parse_distribution(e.at("init"));
    }
    t.tensors.push_back(ts);
  }
  if (std::none_of(t.tensors.begin(), t.tensors.end(), [](auto& x) { return x.role == tensor_role::output; }))
    tensors.fail("a task needs at least one output tensor");
  // Element and byte counts are used unchecked downstream (allocation, timing):
  // a task whose tensors do not fit 64 bits at some size is refused here.
  for (const auto& ts : t.tensors) {
    for (const auto& size : t.sizes) {
      try {
        int64_t bytes = 0;
        if (__builtin_mul_overflow(tensor_elements(ts, size), int64_t(dtype_bytes(ts.type)), &bytes))
          throw expression_error("byte count overflows 64 bits at " + describe_size(size));
        if (tensor_elements(ts, size) <= 0) throw expression_error("no elements at " + describe_size(size));
      } catch (const expression_error& err) {
        tensors.at(ts.name).fail_key("shape", err.what());
      }
    }
  }

}

// Scalar parameters: expressions of the sizes, each checked at the first size.
void parse_scalars(json_reader sc, const std::map<std::string, int64_t>& names, task& t) {
  sc.expect_object();
  bound_entries(sc, k_max_task_scalars);
  for (auto it = sc.json().begin(); it != sc.json().end(); ++it) {
    std::string e = sc.get_string(it.key());
    try {
      eval_real(e, names);
    } catch (const expression_error& err) {
      sc.fail_key(it.key(), err.what());
    }
    t.scalars[it.key()] = e;
  }
}

// One tolerance for every output, or a "default" and per-tensor entries.
void parse_tolerances(json_reader tol, task& t) {
  tol.expect_object();
  bound_entries(tol, k_max_task_tensors + 1);  // and "default"
  if (tol.has("atol")) {
    t.tolerances["default"] = parse_tolerance(tol);
  } else {
    for (auto it = tol.json().begin(); it != tol.json().end(); ++it) {
      if (it.key() != "default" && !t.find_tensor(it.key()))
        tol.fail_key(it.key(), "not a tensor of this task");
      t.tolerances[it.key()] = parse_tolerance(tol.at(it.key()));
    }
    if (!t.tolerances.count("default")) tol.fail_key("default", "missing");
  }
}

}  // namespace

task parse_task(const nlohmann::json& j, const std::string& source, const std::string& path) {
  json_reader r(j, path, source);
  r.expect_object();
  r.reject_unknown({"id", "family", "arch", "title", "statement", "tensors", "sizes", "scalars", "flops",
                    "reference", "baseline", "target_instructions", "tolerance", "speedup_threshold", "causal",
                    "runs_on_hopper", "notes", "op", "level", "variant", "suites", "constraints", "size_rules"});
  task t;
  t.id = r.get_string("id");
  if (t.id.empty() || t.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    r.fail_key("id", "must be non-empty lower-case letters, digits and '_'");
  t.family = r.get_string("family");
  if (t.family != "gemm" && t.family != "attention_fwd" && t.family != "attention_bwd")
    r.fail_key("family", "unknown family '" + t.family + "' (known: gemm, attention_fwd, attention_bwd)");
  t.arch = r.get_string("arch");
  if (!valid_arch(t.arch))
    r.fail_key("arch", "expected sm_<digits> with an optional a or f suffix, such as sm_90a or sm_100f");
  t.title = r.get_string("title", t.id);
  t.statement = r.get_string("statement");
  t.sizes = parse_sizes(r.at("sizes"));
  auto names = size_values(t.sizes.front());

  parse_tensors(r.at("tensors"), names, t);
  if (r.has("scalars")) parse_scalars(r.at("scalars"), names, t);
  t.flops = r.get_string("flops");
  try {
    check_expression(t.flops, names);
  } catch (const expression_error& err) {
    r.fail_key("flops", err.what());
  }
  t.reference = r.get_string("reference");
  t.baseline = r.get_string("baseline");
  bound_entries(r.at("target_instructions"), k_max_task_targets);
  t.target_instructions = r.get_strings("target_instructions");
  for (size_t i = 0; i < t.target_instructions.size(); ++i)
    if (t.target_instructions[i].size() > k_max_target_chars)
      r.at("target_instructions").at(i).fail("longer than " + std::to_string(k_max_target_chars) + " characters");
  parse_tolerances(r.at("tolerance"), t);
  t.speedup_threshold = r.get_number("speedup_threshold");
  t.causal = r.get_bool("causal", false);
  t.runs_on_hopper = r.get_bool("runs_on_hopper", true);
  t.notes = r.get_string("notes", "");
  if (r.has("op")) t.op = parse_op(r.at("op"));
  t.level = int(r.get_int("level", 0));
  if (t.level < 0 || t.level > 4) r.fail_key("level", "must be 1 to 4 (or 0: not given)");
  if (r.has("variant")) {
    auto v = r.at("variant");
    v.expect_object();
    bound_entries(v, k_max_task_tensors);
    for (auto it = v.json().begin(); it != v.json().end(); ++it) t.variant[it.key()] = v.get_string(it.key());
  }
  if (r.has("suites")) {
    bound_entries(r.at("suites"), k_max_task_targets);
    t.suites = r.get_strings("suites");
  }
  t.constraints = r.get_string("constraints", "");
  if (r.has("size_rules")) {
    t.size_rules = parse_size_rules(r.at("size_rules"), names);
    for (size_t i = 0; i < t.sizes.size(); ++i)
      if (std::string why = size_rule_violation(t.size_rules, t.sizes[i]); !why.empty())
        r.at("sizes").at(i).fail("breaks the task's size_rules: " + why);
  }
  return t;
}

task load_task_file(const std::filesystem::path& path) {
  task t = parse_task(read_json_file(path), path.string());
  t.source = path;
  return t;
}

std::vector<task> load_task_dir(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) throw input_error(dir.string() + ": not a folder of tasks");
  std::vector<task> tasks;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") tasks.push_back(load_task_file(e.path()));
  const std::filesystem::path families = dir / "families";
  if (std::filesystem::is_directory(families))
    for (const auto& e : std::filesystem::directory_iterator(families))
      if (e.is_regular_file() && e.path().extension() == ".json")
        for (task& t : expand_family_file(e.path())) tasks.push_back(std::move(t));
  std::sort(tasks.begin(), tasks.end(), [](const task& a, const task& b) { return a.id < b.id; });
  for (size_t i = 1; i < tasks.size(); ++i)
    if (tasks[i].id == tasks[i - 1].id)
      throw input_error(tasks[i].source.string() + ": task id '" + tasks[i].id + "' is also declared in " +
                        tasks[i - 1].source.string());
  return tasks;
}

task load_task(const std::filesystem::path& dir, const std::string& id) {
  for (task& t : load_task_dir(dir))
    if (t.id == id) return std::move(t);
  throw input_error(dir.string() + ": no task '" + id + "' (ptxbench tasks list shows them)");
}

std::vector<std::string> suite_names(const std::vector<task>& all) {
  std::set<std::string> names{"full"};
  for (const auto& t : all) names.insert(t.suites.begin(), t.suites.end());
  return {names.begin(), names.end()};
}

std::vector<task> tasks_in_suite(const std::vector<task>& all, const std::string& name) {
  std::vector<task> out;
  for (const auto& t : all)
    if (name == "full" || std::find(t.suites.begin(), t.suites.end(), name) != t.suites.end()) out.push_back(t);
  if (out.empty()) {
    std::string known;
    for (const auto& n : suite_names(all)) known += (known.empty() ? "" : ", ") + n;
    throw input_error("unknown suite '" + name + "' (known: " + known + ")");
  }
  return out;
}

nlohmann::json task_to_json(const task& t) {
  nlohmann::json j;
  j["id"] = t.id;
  j["family"] = t.family;
  j["arch"] = t.arch;
  j["title"] = t.title;
  j["statement"] = t.statement;
  j["tensors"] = nlohmann::json::object();
  for (const auto& ts : t.tensors) {
    j["tensors"][ts.name] = {{"dtype", to_string(ts.type)},
                             {"shape", ts.shape},
                             {"role", ts.role == tensor_role::input ? "input" : "output"}};
    if (ts.role == tensor_role::input) j["tensors"][ts.name]["init"] = distribution_to_json(ts.init);
  }
  j["sizes"] = nlohmann::json::array();
  for (const auto& s : t.sizes) {
    nlohmann::json e(s.values);
    if (s.timed) e["timed"] = true;
    if (s.hidden) e["hidden"] = true;
    j["sizes"].push_back(e);
  }
  if (!t.scalars.empty()) j["scalars"] = t.scalars;
  j["flops"] = t.flops;
  j["reference"] = t.reference;
  j["baseline"] = t.baseline;
  j["target_instructions"] = t.target_instructions;
  j["tolerance"] = nlohmann::json::object();
  for (const auto& [k, v] : t.tolerances)
    j["tolerance"][k] = {{"atol", v.atol},
                         {"rtol", v.rtol},
                         {"max_mismatch_fraction", v.max_mismatch_fraction},
                         {"rel_l2", v.rel_l2},
                         {"max_err_to_scale", v.max_err_to_scale}};
  j["speedup_threshold"] = t.speedup_threshold;
  j["causal"] = t.causal;
  j["runs_on_hopper"] = t.runs_on_hopper;
  j["notes"] = t.notes;
  j["op"] = op_to_json(t.op);
  if (t.level > 0) j["level"] = t.level;
  if (!t.variant.empty()) j["variant"] = t.variant;
  if (!t.suites.empty()) j["suites"] = t.suites;
  if (!t.constraints.empty()) j["constraints"] = t.constraints;
  if (!t.size_rules.empty()) j["size_rules"] = size_rules_to_json(t.size_rules);
  return j;
}

std::map<std::string, int64_t> size_values(const size_point& s) { return s.values; }

int64_t tensor_elements(const tensor_spec& t, const size_point& s) {
  int64_t n = 1;
  for (const auto& d : t.shape)
    if (__builtin_mul_overflow(n, eval_int(d, s.values), &n))
      throw expression_error("tensor '" + t.name + "': element count overflows 64 bits at " + describe_size(s));
  return n;
}

std::map<std::string, double> scalar_values(const task& t, const size_point& s) {
  std::map<std::string, double> out;
  for (const auto& [k, e] : t.scalars) out[k] = eval_real(e, s.values);
  return out;
}

double task_flops(const task& t, const size_point& s) { return eval_real(t.flops, s.values); }

std::string describe_size(const size_point& s) {
  std::string out;
  for (const auto& [k, v] : s.values) out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return out;
}

}  // namespace ptxbench
