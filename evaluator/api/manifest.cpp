#include "evaluator/api/manifest.hpp"

#include <limits>
#include <set>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {

const char* to_string(binding_kind k) {
  switch (k) {
    case binding_kind::buffer: return "buffer";
    case binding_kind::size: return "size";
    case binding_kind::scalar: return "scalar";
    case binding_kind::tensor_map: return "tensor_map";
    case binding_kind::constant: return "const";
  }
  return "?";
}

namespace {

// An integer field as expression text; unsigned values past int64 are refused
// instead of wrapping to negative numbers.
std::string integer_text(const json_reader& r) {
  const auto& e = r.json();
  if (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    r.fail("integer " + e.dump() + " is out of range");
  return std::to_string(e.get<int64_t>());
}

// A dimension triple: [x, y, z] of integers or expression strings; missing
// trailing entries default to 1.
std::array<std::string, 3> parse_dim3(const json_reader& r) {
  r.expect_array();
  if (r.json().empty() || r.json().size() > 3) r.fail("expected 1 to 3 entries [x, y, z]");
  std::array<std::string, 3> out{"1", "1", "1"};
  for (size_t i = 0; i < r.json().size(); ++i) {
    const auto& e = r.json()[i];
    if (e.is_number_integer()) out[i] = integer_text(r.at(i));
    else if (e.is_string()) out[i] = e.get<std::string>();
    else r.at(i).fail("expected an integer or an expression string");
  }
  return out;
}

std::string parse_expr_field(const json_reader& r, const std::string& key, const std::string& fallback) {
  if (!r.has(key)) return fallback;
  const auto& e = r.json().at(key);
  if (e.is_number_integer()) return integer_text(r.at(key));
  if (e.is_string()) return e.get<std::string>();
  r.fail_key(key, "expected an integer or an expression string");
}

param_binding parse_binding(const json_reader& r) {
  r.expect_object();
  if (r.json().size() != 1)
    r.fail("a parameter binds to exactly one of buffer, size, scalar, tensor_map, const");
  param_binding b;
  const std::string key = r.json().begin().key();
  if (key == "buffer") {
    b.kind = binding_kind::buffer;
    b.name = r.get_string("buffer");
  } else if (key == "size") {
    b.kind = binding_kind::size;
    b.name = r.get_string("size");
  } else if (key == "scalar") {
    b.kind = binding_kind::scalar;
    b.name = r.get_string("scalar");
  } else if (key == "const") {
    b.kind = binding_kind::constant;
    const auto& v = r.json().at("const");
    if (!v.is_number()) r.fail_key("const", "expected a number");
    if (!v.is_number_float()) integer_text(r.at("const"));
    b.const_is_float = v.is_number_float();
    b.const_value = v.get<double>();
  } else if (key == "tensor_map") {
    b.kind = binding_kind::tensor_map;
    auto m = r.at("tensor_map");
    m.reject_unknown({"tensor", "box", "swizzle", "view", "l2_promotion"});
    b.map.tensor = m.get_string("tensor");
    b.name = b.map.tensor;
    auto box = m.at("box");
    box.expect_array();
    if (box.json().empty() || box.json().size() > 5) box.fail("expected 1 to 5 box dimensions, innermost first");
    for (size_t i = 0; i < box.json().size(); ++i) {
      const auto& e = box.json()[i];
      if (!e.is_number_integer() || e.get<int64_t>() <= 0 || e.get<int64_t>() > 256)
        box.at(i).fail("box dimensions are integers from 1 to 256");
      b.map.box.push_back(e.get<int64_t>());
    }
    b.map.swizzle = m.get_string("swizzle", "none");
    if (b.map.swizzle != "none" && b.map.swizzle != "32B" && b.map.swizzle != "64B" && b.map.swizzle != "128B")
      m.fail_key("swizzle", "expected none, 32B, 64B or 128B");
    if (m.has("view")) b.map.view = m.get_strings("view");
    b.map.l2_promotion = m.get_string("l2_promotion", "none");
    if (b.map.l2_promotion != "none" && b.map.l2_promotion != "64B" && b.map.l2_promotion != "128B" &&
        b.map.l2_promotion != "256B")
      m.fail_key("l2_promotion", "expected none, 64B, 128B or 256B");
  } else {
    r.fail_key(key, "unknown binding (known: buffer, size, scalar, tensor_map, const)");
  }
  return b;
}

}  // namespace

manifest parse_manifest(const nlohmann::json& j) {
  json_reader r(j, "$");
  r.expect_object();
  r.reject_unknown({"launches", "scratch"});
  manifest m;
  auto launches = r.at("launches");
  launches.expect_array();
  if (launches.json().empty()) launches.fail("at least one launch is needed");
  if (launches.json().size() > k_max_manifest_launches)
    launches.fail("at most " + std::to_string(k_max_manifest_launches) + " launches");
  for (size_t i = 0; i < launches.json().size(); ++i) {
    auto l = launches.at(i);
    l.expect_object();
    l.reject_unknown({"kernel", "grid", "block", "shared_bytes", "cluster", "params"});
    launch_spec s;
    s.kernel = l.get_string("kernel");
    s.grid = parse_dim3(l.at("grid"));
    s.block = parse_dim3(l.at("block"));
    if (l.has("cluster")) s.cluster = parse_dim3(l.at("cluster"));
    s.shared_bytes = parse_expr_field(l, "shared_bytes", "0");
    auto params = l.at("params");
    params.expect_array();
    if (params.json().size() > k_max_manifest_params)
      params.fail("at most " + std::to_string(k_max_manifest_params) + " parameters");
    for (size_t p = 0; p < params.json().size(); ++p) s.params.push_back(parse_binding(params.at(p)));
    m.launches.push_back(s);
  }
  if (r.has("scratch")) {
    auto sc = r.at("scratch");
    sc.expect_array();
    if (sc.json().size() > k_max_manifest_scratch)
      sc.fail("at most " + std::to_string(k_max_manifest_scratch) + " scratch buffers");
    std::set<std::string> seen;
    for (size_t i = 0; i < sc.json().size(); ++i) {
      auto e = sc.at(i);
      e.reject_unknown({"name", "bytes", "init"});
      scratch_spec s;
      s.name = e.get_string("name");
      if (!seen.insert(s.name).second) e.fail_key("name", "duplicate scratch buffer '" + s.name + "'");
      s.bytes = parse_expr_field(e, "bytes", "");
      if (s.bytes.empty()) e.fail_key("bytes", "missing");
      s.init = e.get_string("init", "zero");
      if (s.init != "zero" && s.init != "poison") e.fail_key("init", "expected zero or poison");
      m.scratch.push_back(s);
    }
  }
  return m;
}

manifest parse_manifest_text(const std::string& text) {
  nlohmann::json j;
  if (text.size() > k_max_manifest_bytes)
    throw input_error("manifest of " + std::to_string(text.size()) + " bytes; the limit is " +
                      std::to_string(k_max_manifest_bytes));
  try {
    j = parse_json_bounded(text, "manifest");
  } catch (const input_error& e) {
    // Keeps the message callers have matched on: "manifest is not valid JSON: ...".
    std::string m = e.what();
    const std::string prefix = "manifest: invalid JSON: ";
    if (m.rfind(prefix, 0) == 0) throw input_error("manifest is not valid JSON: " + m.substr(prefix.size()));
    throw;
  }
  return parse_manifest(j);
}

nlohmann::json manifest_to_json(const manifest& m) {
  nlohmann::json j;
  j["launches"] = nlohmann::json::array();
  for (const auto& l : m.launches) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : l.params) {
      switch (p.kind) {
        case binding_kind::tensor_map: {
          nlohmann::json tm{{"tensor", p.map.tensor}, {"box", p.map.box}, {"swizzle", p.map.swizzle}};
          if (!p.map.view.empty()) tm["view"] = p.map.view;
          if (p.map.l2_promotion != "none") tm["l2_promotion"] = p.map.l2_promotion;
          params.push_back({{"tensor_map", tm}});
          break;
        }
        case binding_kind::constant:
          if (p.const_is_float) params.push_back({{"const", p.const_value}});
          else params.push_back({{"const", static_cast<int64_t>(p.const_value)}});
          break;
        default: params.push_back({{to_string(p.kind), p.name}});
      }
    }
    j["launches"].push_back({{"kernel", l.kernel}, {"grid", l.grid}, {"block", l.block},
                             {"shared_bytes", l.shared_bytes}, {"cluster", l.cluster}, {"params", params}});
  }
  if (!m.scratch.empty()) {
    j["scratch"] = nlohmann::json::array();
    for (const auto& s : m.scratch) j["scratch"].push_back({{"name", s.name}, {"bytes", s.bytes}, {"init", s.init}});
  }
  return j;
}

std::vector<std::string> check_manifest_against_task(const manifest& m, const task& t) {
  std::vector<std::string> problems;
  std::set<std::string> scratch_names;
  for (const auto& s : m.scratch) {
    scratch_names.insert(s.name);
    if (t.find_tensor(s.name)) problems.push_back("scratch '" + s.name + "' has the name of a task tensor");
  }
  for (const auto& size : t.sizes) {
    const auto names = size_values(size);
    const std::string at = " " + at_size(size_label(t, size));
    auto check_int = [&](const std::string& where, const std::string& expr, int64_t lo) {
      try {
        int64_t v = eval_int(expr, names);
        if (v < lo) problems.push_back(where + " = " + std::to_string(v) + at + " (must be >= " + std::to_string(lo) + ")");
      } catch (const expression_error& e) {
        problems.push_back(where + ": " + e.what());
      }
    };
    for (const auto& s : m.scratch) check_int("scratch '" + s.name + "' bytes", s.bytes, 1);
    for (size_t i = 0; i < m.launches.size(); ++i) {
      const auto& l = m.launches[i];
      const std::string li = "launch " + std::to_string(i) + " (" + l.kernel + ")";
      const char* axes = "xyz";
      for (int a = 0; a < 3; ++a) {
        check_int(li + " grid." + axes[a], l.grid[a], 1);
        check_int(li + " block." + axes[a], l.block[a], 1);
        check_int(li + " cluster." + axes[a], l.cluster[a], 1);
      }
      check_int(li + " shared_bytes", l.shared_bytes, 0);
    }
    if (&size != &t.sizes.front()) continue;  // name checks once
    for (size_t i = 0; i < m.launches.size(); ++i) {
      const auto& l = m.launches[i];
      for (size_t p = 0; p < l.params.size(); ++p) {
        const auto& b = l.params[p];
        const std::string where = "launch " + std::to_string(i) + " (" + l.kernel + ") param " + std::to_string(p);
        switch (b.kind) {
          case binding_kind::buffer:
            if (!t.find_tensor(b.name) && !scratch_names.count(b.name))
              problems.push_back(where + ": buffer '" + b.name + "' is neither a task tensor nor a scratch buffer");
            break;
          case binding_kind::size:
            if (!names.count(b.name)) problems.push_back(where + ": '" + b.name + "' is not a size of this task");
            break;
          case binding_kind::scalar:
            if (!t.scalars.count(b.name)) problems.push_back(where + ": '" + b.name + "' is not a scalar of this task");
            break;
          case binding_kind::tensor_map: {
            const tensor_spec* ts = t.find_tensor(b.map.tensor);
            if (!ts) {
              problems.push_back(where + ": tensor_map of unknown tensor '" + b.map.tensor + "'");
              break;
            }
            size_t rank = b.map.view.empty() ? ts->shape.size() : b.map.view.size();
            if (b.map.box.size() != rank)
              problems.push_back(where + ": tensor_map box has " + std::to_string(b.map.box.size()) +
                                 " dimensions but the tensor (view) has " + std::to_string(rank));
            for (const auto& v : b.map.view) check_int(where + " view", v, 1);
            if (!b.map.view.empty()) {
              int64_t n = 1;
              bool overflow = false;
              try {
                for (const auto& v : b.map.view) overflow |= __builtin_mul_overflow(n, eval_int(v, names), &n);
                if (overflow) problems.push_back(where + ": view element count overflows 64 bits" + at);
                else if (n != tensor_elements(*ts, size))
                  problems.push_back(where + ": view has " + std::to_string(n) + " elements but tensor '" + ts->name +
                                     "' has " + std::to_string(tensor_elements(*ts, size)));
              } catch (const expression_error&) {
                // A view expression that does not evaluate is reported by check_int above.
              }
            }
            int64_t inner_bytes = b.map.box.empty() ? 0 : b.map.box.front() * dtype_bytes(ts->type);
            if (inner_bytes % 16 != 0)
              problems.push_back(where + ": the innermost box dimension must span a multiple of 16 bytes");
            int64_t swz = b.map.swizzle == "32B" ? 32 : b.map.swizzle == "64B" ? 64 : b.map.swizzle == "128B" ? 128 : 0;
            if (swz && inner_bytes > swz)
              problems.push_back(where + ": with swizzle " + b.map.swizzle + " the innermost box dimension may span at most " +
                                 std::to_string(swz) + " bytes (it spans " + std::to_string(inner_bytes) + ")");
            break;
          }
          case binding_kind::constant: break;
        }
      }
    }
  }
  for (auto& p : check_manifest_bounds(m, t)) problems.push_back(std::move(p));
  return problems;
}

}  // namespace ptxbench
