// The typed schema of export records: one list of columns per kind and format,
// used both to write the dataset card's `features` (so `datasets` reads a
// column of nulls as float64, not as the null type that fails to concatenate
// with a file where the column has numbers) and to check every record.
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/data/export.hpp"

namespace ptxbench::data {
namespace {

using json = nlohmann::json;

struct column {
  const char* name;
  const char* dtype;  // string | int64 | float64
  bool nullable;
};

const std::vector<column> k_provenance = {
    {"kind", "string", false},          {"experiment", "string", false},
    {"experiment_id", "int64", false},  {"trajectory", "int64", false},
    {"sample", "int64", false},         {"round", "int64", false},
    {"failing_round", "int64", true},   {"evaluator_version", "string", false},
    {"task", "string", false},          {"family", "string", false},
    {"model", "string", false},         {"failing_stage", "string", true},
    {"fix_stage", "string", false},     {"speedup", "float64", true},
    {"feedback", "string", false},      {"run_history", "string", false},
    {"run_history_k", "int64", true},   {"export_history", "string", false},
    {"reasoning", "string", false},     {"temperature", "float64", true},
    {"top_p", "float64", true},         {"max_tokens", "int64", true},
    {"seed", "int64", true},            {"sampling_extra", "string", false},
    {"source", "string", false},        {"operator", "string", true},
    {"author", "string", false},        {"cut_off", "bool", false},
    {"level", "int64", false},          {"variant", "string", false},
    {"bytes", "int64", false},          {"tokens", "int64", true},
    {"over_max_tokens", "bool", false},
};
// --kind prompts: flat rows beside the prompt, no provenance.
const std::vector<column> k_prompt_columns = {
    {"task_id", "string", false}, {"family", "string", false}, {"level", "int64", false},
    {"variant", "string", false}, {"suite", "string", false},
};
const std::vector<column> k_preference_extra = {
    {"rejected_trajectory", "int64", false},
    {"rejected_round", "int64", false},
    {"rejected_speedup", "float64", true},
    // Branching: the siblings' branch indexes (null for a round's only reply),
    // "siblings" or "samples", and "stage" or "speedup" (what made chosen better).
    {"branch", "int64", true},
    {"rejected_branch", "int64", true},
    {"pair", "string", false},
    {"decided_by", "string", false},
};

std::vector<column> provenance_columns(const export_options& o) {
  auto out = k_provenance;
  if (o.kind == export_kind::preference) out.insert(out.end(), k_preference_extra.begin(), k_preference_extra.end());
  return out;
}

std::vector<std::string> message_columns(const export_options& o) {
  std::vector<std::string> out{"role", "content"};
  if (o.reasoning == reasoning_mode::field) out.push_back("reasoning_content");
  return out;
}

// The top-level list-of-messages columns, in record order.
std::vector<std::string> conversation_columns(const export_options& o) {
  if (o.kind == export_kind::prompts) return {"prompt"};
  if (o.kind == export_kind::preference) return {"prompt", "chosen", "rejected"};
  if (o.format == export_format::messages) return {"messages"};
  return {"prompt", "completion"};
}

bool has_type(const json& v, const std::string& dtype) {
  if (dtype == "string") return v.is_string();
  if (dtype == "int64") return v.is_number_integer();
  if (dtype == "bool") return v.is_boolean();
  return v.is_number_float();
}

[[noreturn]] void bad(const std::string& what) { throw std::logic_error("export record: " + what); }

}  // namespace

std::string features_yaml(const export_options& options) {
  std::string out = "  features:\n";
  for (const auto& name : conversation_columns(options)) {
    out += "  - name: " + name + "\n    list:\n";
    for (const auto& m : message_columns(options)) out += "    - name: " + m + "\n      dtype: string\n";
  }
  if (options.kind == export_kind::prompts) {
    for (const auto& c : k_prompt_columns) out += std::string("  - name: ") + c.name + "\n    dtype: " + c.dtype + "\n";
    return out;
  }
  out += "  - name: provenance\n    struct:\n";
  for (const auto& c : provenance_columns(options)) {
    out += std::string("    - name: ") + c.name + "\n      dtype: " + c.dtype + "\n";
  }
  return out;
}

void check_record_schema(const json& body, const export_options& options) {
  if (!body.is_object()) bad("not an object");
  auto conversations = conversation_columns(options);
  if (options.kind != export_kind::prompts && body.size() != conversations.size() + 1)
    bad("has " + std::to_string(body.size()) + " columns");
  auto messages = message_columns(options);
  for (const auto& name : conversations) {
    if (!body.contains(name) || !body[name].is_array()) bad("$." + name + " is not a list");
    for (size_t i = 0; i < body[name].size(); ++i) {
      const auto& m = body[name][i];
      std::string at = "$." + name + "[" + std::to_string(i) + "]";
      if (!m.is_object() || m.size() != messages.size()) bad(at + " does not have the message columns");
      for (const auto& key : messages) {
        if (!m.contains(key) || !m[key].is_string()) bad(at + "." + key + " is not a string");
      }
    }
  }
  const bool flat = options.kind == export_kind::prompts;
  if (!flat && (!body.contains("provenance") || !body["provenance"].is_object())) bad("$.provenance is not an object");
  const auto& p = flat ? body : body["provenance"];
  auto columns = flat ? k_prompt_columns : provenance_columns(options);
  if (p.size() != columns.size() + (flat ? conversations.size() : 0))
    bad(std::string(flat ? "$" : "$.provenance") + " has " + std::to_string(p.size()) + " columns");
  for (const auto& c : columns) {
    std::string at = std::string(flat ? "$." : "$.provenance.") + c.name;
    if (!p.contains(c.name)) bad(at + " is missing");
    const auto& v = p[c.name];
    if (v.is_null() ? !c.nullable : !has_type(v, c.dtype)) bad(at + " is not " + c.dtype);
  }
}

}  // namespace ptxbench::data
