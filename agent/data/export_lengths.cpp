// How long the trained sequences of an export are, in bytes and tokens, and
// the --max-tokens limit: a trainer with max_length below a record's length
// truncates or drops it without saying so, so the export says it first.
#include "agent/data/export_lengths.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {
namespace {

using json = nlohmann::json;

// The text of each message of a list.
std::vector<std::string_view> texts(const json& messages) {
  std::vector<std::string_view> out;
  if (!messages.is_array()) return out;
  for (const auto& m : messages) {
    if (m.is_object() && m.contains("content") && m["content"].is_string())
      out.push_back(m["content"].get_ref<const std::string&>());
    if (m.is_object() && m.contains("reasoning_content") && m["reasoning_content"].is_string())
      out.push_back(m["reasoning_content"].get_ref<const std::string&>());
  }
  return out;
}

struct length {
  int64_t bytes = 0;
  int64_t tokens = 0;
};

length measure(const json& messages, token_counter* counter) {
  length out;
  for (auto text : texts(messages)) {
    out.bytes += static_cast<int64_t>(text.size());
    if (counter) out.tokens += counter->count(text);
  }
  return out;
}

// The trained sequence: prompt + completion, messages, or prompt + the longer
// of chosen and rejected (a DPO trainer truncates each pair to max_length).
length sequence_length(const json& body, token_counter* counter) {
  length total = measure(body.value("prompt", json()), counter);
  auto add = [&](const length& l) {
    total.bytes += l.bytes;
    total.tokens += l.tokens;
  };
  if (body.contains("messages")) add(measure(body["messages"], counter));
  if (body.contains("completion")) add(measure(body["completion"], counter));
  if (body.contains("chosen")) {
    const length chosen = measure(body["chosen"], counter), rejected = measure(body["rejected"], counter);
    add(counter ? (chosen.tokens >= rejected.tokens ? chosen : rejected)
                : (chosen.bytes >= rejected.bytes ? chosen : rejected));
  }
  return total;
}

std::string percentiles(std::vector<int64_t> v) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))]; };
  char buf[160];
  std::snprintf(buf, sizeof buf, "min %lld, median %lld, p90 %lld, p99 %lld, max %lld",
                static_cast<long long>(v.front()), static_cast<long long>(at(0.5)), static_cast<long long>(at(0.9)),
                static_cast<long long>(at(0.99)), static_cast<long long>(v.back()));
  return buf;
}

}  // namespace

void check_length_options(const export_options& options) {
  if (options.max_tokens && !options.tokenizer)
    throw input_error("--max-tokens needs --tokenizer FILE (the model's tokenizer.json) to count tokens");
  if (options.max_tokens && *options.max_tokens < 1) throw input_error("--max-tokens must be at least 1");
}

void measure_lengths(std::vector<export_record>& records, const export_options& options) {
  for (auto& r : records) {
    const length l = sequence_length(r.body, options.tokenizer.get());
    r.bytes = l.bytes;
    if (options.tokenizer) r.tokens = l.tokens;
    if (r.body.contains("provenance")) {
      r.body["provenance"]["bytes"] = r.bytes;
      r.body["provenance"]["tokens"] = r.tokens ? json(*r.tokens) : json(nullptr);
    }
  }
}

void apply_length_limit(export_result& result, const export_options& options) {
  measure_lengths(result.records, options);
  if (options.tokenizer) {
    result.tokenizer = options.tokenizer->description();
    result.unnormalised_texts = options.tokenizer->unnormalised_texts();
  }
  if (!options.max_tokens) return;
  std::vector<export_record> kept;
  for (auto& r : result.records) {
    const bool over = r.tokens && *r.tokens > *options.max_tokens;
    if (over && !options.flag_over_max) {
      ++result.over_max_dropped;
      continue;
    }
    if (over) {
      ++result.over_max_flagged;
      if (r.body.contains("provenance")) r.body["provenance"]["over_max_tokens"] = true;
    }
    kept.push_back(std::move(r));
  }
  result.records = std::move(kept);
}

std::string format_lengths(const export_result& result, bool markdown) {
  std::vector<int64_t> bytes, tokens;
  for (const auto& r : result.records) {
    bytes.push_back(r.bytes);
    if (r.tokens) tokens.push_back(*r.tokens);
  }
  std::ostringstream os;
  const char* item = markdown ? "- " : "  ";
  os << (markdown ? "" : "lengths of the records written (prompt and completion; a pair's prompt and longer answer):\n");
  os << item << "bytes: " << percentiles(bytes) << "\n";
  if (tokens.empty()) {
    os << item << "tokens: not counted (give the model's tokenizer.json with --tokenizer; a trainer's max_length "
       << "is in tokens)\n";
  } else {
    os << item << "tokens (" << result.tokenizer << "): " << percentiles(tokens) << "\n" << item << "records longer than";
    for (int64_t limit : {2048, 4096, 8192, 16384, 32768}) {
      const auto n = std::count_if(tokens.begin(), tokens.end(), [&](int64_t t) { return t > limit; });
      os << " " << limit << ": " << n << (limit == 32768 ? "" : ",");
    }
    os << " tokens (of " << tokens.size() << ")\n";
    if (result.unnormalised_texts > 0)
      os << item << result.unnormalised_texts << " texts hold characters that NFC could change and were counted "
         << "as they are\n";
  }
  if (result.over_max_dropped > 0) os << item << result.over_max_dropped << " records longer than --max-tokens left out\n";
  if (result.over_max_flagged > 0)
    os << item << result.over_max_flagged << " records longer than --max-tokens kept with provenance.over_max_tokens\n";
  return os.str();
}

}  // namespace ptxbench::data
