// Anthropic messages API. Differences from OpenAI that matter here: the system
// prompt is a top-level field, not a message; the reply is a list of content
// blocks (text, thinking, redacted_thinking, tool_use); no seed parameter.
#include "agent/llm/wire_format.hpp"

namespace ptxbench::llm_detail {

namespace {
constexpr const char* anthropic_version = "2023-06-01";

std::string base_messages_url(const std::string& base_url) {
  std::string url = join_url(base_url, "");
  // Accept both https://api.anthropic.com and https://api.anthropic.com/v1.
  bool has_version = url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0;
  return url + (has_version ? "/messages" : "/v1/messages");
}
}  // namespace

wire_request anthropic_request(const provider_config& c, const std::string& api_key,
                               const std::vector<chat_message>& messages) {
  nlohmann::json body = {{"model", c.model}, {"max_tokens", c.max_tokens}};
  std::string system;
  body["messages"] = nlohmann::json::array();
  for (const auto& m : messages) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  }
  if (!system.empty()) body["system"] = system;
  if (c.temperature) body["temperature"] = *c.temperature;
  if (c.top_p) body["top_p"] = *c.top_p;
  if (wants_stream(c)) body["stream"] = true;
  merge_extra(body, c.extra);

  wire_request r;
  r.url = base_messages_url(c.base_url);
  r.headers.push_back("Content-Type: application/json");
  r.headers.push_back(std::string("anthropic-version: ") + anthropic_version);
  if (!api_key.empty()) r.headers.push_back("x-api-key: " + api_key);
  r.body = body.dump();
  return r;
}

reply_parse anthropic_parse_reply(const std::string& body) {
  reply_parse out;
  nlohmann::json j;
  if (!parse_json_object(body, j, out.cause)) return out;
  if (!j.contains("content") || !j["content"].is_array()) {
    out.cause = "response field $.content is missing";
    if (j.contains("error")) out.cause += " (error: " + error_message_of(body) + ")";
    return out;
  }
  completion& r = out.result;
  for (const auto& block : j["content"]) {
    if (!block.is_object() || !block.contains("type") || !block["type"].is_string()) continue;
    const auto type = block["type"].get<std::string>();
    // A text or thinking block without text in it is no reply (not an empty one).
    const char* field = type == "text" ? "text" : type == "thinking" ? "thinking" : nullptr;
    if (!field) continue;
    if (!block.contains(field) || !block[field].is_string()) {
      out.cause = std::string("response field $.content[].") + field + " is not text";
      return out;
    }
    if (type == "text") r.text += block["text"].get<std::string>();
    else r.reasoning += (r.reasoning.empty() ? "" : "\n\n") + block["thinking"].get<std::string>();
  }
  if (j.contains("stop_reason") && j["stop_reason"].is_string())
    r.finish_reason = j["stop_reason"].get<std::string>();
  if (j.contains("model") && j["model"].is_string()) r.model = j["model"].get<std::string>();
  if (j.contains("usage") && j["usage"].is_object()) {
    r.prompt_tokens = token_count(j["usage"], "input_tokens");
    r.completion_tokens = token_count(j["usage"], "output_tokens");
  }
  out.ok = true;
  return out;
}

}  // namespace ptxbench::llm_detail
