#include "evaluator/api/task_family.hpp"

#include <map>

#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench {
namespace {

using json = nlohmann::json;
using fragments = std::map<std::string, std::string>;

struct axis {
  std::string name;
  json values;  // value -> patch
};

// Replaces every ${name} of `text` by its fragment, fragments inside
// fragments too, at most k_max_text_depth deep.
std::string fill(const std::string& text, const fragments& f, const json_reader& where, int depth = 0) {
  if (depth > k_max_text_depth)
    where.fail("fragments nested deeper than " + std::to_string(k_max_text_depth) + " levels (a cycle?)");
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("${", pos);
    if (open == std::string::npos) break;
    size_t close = text.find('}', open);
    if (close == std::string::npos) where.fail("unclosed ${ in \"" + text.substr(open, 40) + "\"");
    out += text.substr(pos, open - pos);
    const std::string key = text.substr(open + 2, close - open - 2);
    auto it = f.find(key);
    if (it == f.end()) where.fail("${" + key + "} is not defined (no text fragment, axis or built-in of that name)");
    out += fill(it->second, f, where, depth + 1);
    if (out.size() > k_max_text_chars)
      where.fail("a filled-in text is longer than " + std::to_string(k_max_text_chars) + " characters");
    pos = close + 1;
  }
  return out + text.substr(pos);
}

void fill_all(json& j, const fragments& f, const json_reader& where) {
  if (j.is_string()) j = fill(j.get<std::string>(), f, where);
  else if (j.is_object() || j.is_array())
    for (auto& e : j) fill_all(e, f, where);
}

// The fragments of `doc` ("text"), then the built-ins, which a fragment may not redefine.
fragments fragments_of(const json& doc, const fragments& builtins, const json_reader& where) {
  fragments f;
  if (doc.contains("text")) {
    if (!doc["text"].is_object()) where.fail_key("text", "expected an object of strings");
    for (const auto& [k, v] : doc["text"].items()) {
      if (!v.is_string()) where.fail_key("text." + k, "expected a string");
      if (builtins.count(k)) where.fail_key("text." + k, "redefines the axis or built-in ${" + k + "}");
      f[k] = v.get<std::string>();
    }
  }
  for (const auto& [k, v] : builtins) f[k] = v;
  return f;
}

std::vector<axis> read_axes(const json_reader& r) {
  r.expect_array();
  std::vector<axis> axes;
  for (size_t i = 0; i < r.json().size(); ++i) {
    json_reader a = r.at(i);
    a.expect_object();
    a.reject_unknown({"name", "values"});
    axis x{a.get_string("name"), a.at("values").json()};
    a.at("values").expect_object();
    if (x.values.empty()) a.fail_key("values", "an axis needs at least one value");
    for (const auto& [value, patch] : x.values.items())
      if (!patch.is_object()) a.at("values").fail_key(value, "expected an object (a patch of the task)");
    for (const auto& other : axes)
      if (other.name == x.name) a.fail_key("name", "axis '" + x.name + "' is declared twice");
    axes.push_back(std::move(x));
  }
  return axes;
}

json expand_variant(const json_reader& fam, const std::vector<axis>& axes, const json_reader& v) {
  v.expect_object();
  const std::string id = v.get_string("id");
  json_reader chosen = v.at("variant");
  chosen.expect_object();
  fragments builtins{{"id", id}, {"family", fam.get_string("family")}};
  json doc = fam.has("base") ? fam.at("base").json() : json::object();
  for (const auto& a : axes) {
    if (!chosen.has(a.name)) chosen.fail_key(a.name, "missing (every variant gives a value of every axis)");
    const std::string value = chosen.get_string(a.name);
    if (!a.values.contains(value)) {
      std::string known;
      for (const auto& [k, p] : a.values.items()) known += (known.empty() ? "" : ", ") + k;
      chosen.fail_key(a.name, "'" + value + "' is not a value of this axis (known: " + known + ")");
    }
    doc.merge_patch(a.values[value]);
    builtins[a.name] = value;
  }
  for (const auto& [k, val] : chosen.json().items())
    if (!builtins.count(k) || k == "id" || k == "family") chosen.fail_key(k, "not an axis of this family");
  json own = v.json();
  own.erase("variant");
  doc.merge_patch(own);
  if (doc.contains("size_set")) {
    if (!doc["size_set"].is_string()) v.fail_key("size_set", "expected the name of a size set");
    const std::string name = fill(doc["size_set"].get<std::string>(), fragments_of(doc, builtins, v), v);
    if (!fam.has("size_sets") || !fam.at("size_sets").has(name))
      v.fail("size set '" + name + "' is not declared in size_sets");
    json under = fam.at("size_sets").at(name).json();
    doc.erase("size_set");
    under.merge_patch(doc);
    doc = std::move(under);
  }
  fill_all(doc, fragments_of(doc, builtins, v), v);
  doc.erase("text");
  if (doc.contains("family") && doc["family"] != fam.json()["family"])
    v.fail("a variant of family '" + fam.get_string("family") + "' cannot set another family");
  doc["family"] = fam.json()["family"];
  doc["variant"] = chosen.json();
  return doc;
}

}  // namespace

std::vector<json> expand_family(const json& family, const std::string& source) {
  json_reader fam(family, "$", source);
  fam.expect_object();
  fam.reject_unknown({"family", "_comment", "base", "axes", "size_sets", "variants"});
  fam.get_string("family");
  if (fam.has("base")) fam.at("base").expect_object();
  if (fam.has("size_sets")) fam.at("size_sets").expect_object();
  const std::vector<axis> axes = fam.has("axes") ? read_axes(fam.at("axes")) : std::vector<axis>{};
  json_reader variants = fam.at("variants");
  variants.expect_array();
  if (variants.json().size() > k_max_family_variants)
    variants.fail(std::to_string(variants.json().size()) + " variants; the limit is " +
                  std::to_string(k_max_family_variants));
  std::vector<json> out;
  for (size_t i = 0; i < variants.json().size(); ++i) out.push_back(expand_variant(fam, axes, variants.at(i)));
  return out;
}

std::vector<task> expand_family_file(const std::filesystem::path& path) {
  const json family = read_json_file(path, "task family");
  std::vector<task> tasks;
  const std::vector<json> docs = expand_family(family, path.string());
  for (size_t i = 0; i < docs.size(); ++i) {
    // Errors name the variant; the field may come from base, an axis, a size set or the variant.
    const std::string where = path.string() + ": $.variants[" + std::to_string(i) + "] (" +
                              docs[i].value("id", std::string("?")) + ", expanded)";
    task t = parse_task(docs[i], where);
    t.source = path;
    tasks.push_back(std::move(t));
  }
  return tasks;
}

}  // namespace ptxbench
