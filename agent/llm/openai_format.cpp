// OpenAI-compatible chat completions, as served by vLLM, SGLang, llama.cpp
// server, Ollama (/v1) and hosted APIs. Servers differ in where they put the
// reasoning text (reasoning_content or reasoning), so both are read.
#include "agent/llm/wire_format.hpp"

namespace ptxbench::llm_detail {

namespace {
std::string string_or_empty(const nlohmann::json& parent, const char* key) {
  if (!parent.is_object() || !parent.contains(key)) return "";
  const auto& v = parent[key];
  return v.is_string() ? v.get<std::string>() : "";
}

// content is a string, null (only reasoning or a cut-off reply), or, on a
// few servers, an array of {"type": "text", "text": ...} parts. Anything else
// ("content": 12345) is no reply: false, rather than an empty text judged as
// the model's answer.
bool content_text(const nlohmann::json& message, std::string& text) {
  if (!message.contains("content") || message["content"].is_null()) return true;
  const auto& content = message["content"];
  if (content.is_string()) {
    text = content.get<std::string>();
    return true;
  }
  if (!content.is_array()) return false;
  for (const auto& part : content) {
    if (!part.is_object()) return false;
    if (!part.contains("text")) continue;  // a part of another kind (an image, a refusal's marker)
    if (!part["text"].is_string()) return false;
    text += part["text"].get<std::string>();
  }
  return true;
}
}  // namespace

wire_request openai_request(const provider_config& c, const std::string& api_key,
                            const std::vector<chat_message>& messages) {
  nlohmann::json body = {{"model", c.model}, {"max_tokens", c.max_tokens}};
  body["messages"] = nlohmann::json::array();
  for (const auto& m : messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  if (c.temperature) body["temperature"] = *c.temperature;
  if (c.top_p) body["top_p"] = *c.top_p;
  if (c.seed) body["seed"] = *c.seed;
  if (wants_stream(c)) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};  // the token counts come in a last chunk
  }
  merge_extra(body, c.extra);

  wire_request r;
  r.url = join_url(c.base_url, "/chat/completions");
  r.headers.push_back("Content-Type: application/json");
  if (!api_key.empty()) r.headers.push_back("Authorization: Bearer " + api_key);
  r.body = body.dump();
  return r;
}

reply_parse openai_parse_reply(const std::string& body) {
  reply_parse out;
  nlohmann::json j;
  if (!parse_json_object(body, j, out.cause)) return out;
  const auto choices = j.contains("choices") ? j["choices"] : nlohmann::json();
  if (!choices.is_array() || choices.empty()) {
    out.cause = "response has no choices";
    if (j.contains("error")) out.cause += " (error: " + error_message_of(body) + ")";
    return out;
  }
  const auto& choice = choices[0];
  if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object()) {
    out.cause = "response field $.choices[0].message is missing";
    return out;
  }
  const auto& message = choice["message"];
  completion& r = out.result;
  if (!content_text(message, r.text)) {
    out.cause = "response field $.choices[0].message.content is not text";
    return out;
  }
  r.reasoning = string_or_empty(message, "reasoning_content");
  if (r.reasoning.empty()) r.reasoning = string_or_empty(message, "reasoning");
  r.finish_reason = string_or_empty(choice, "finish_reason");
  r.model = string_or_empty(j, "model");
  if (j.contains("usage") && j["usage"].is_object()) {
    const auto& usage = j["usage"];
    r.prompt_tokens = token_count(usage, "prompt_tokens");
    r.completion_tokens = token_count(usage, "completion_tokens");
    if (usage.contains("completion_tokens_details"))
      r.reasoning_tokens = token_count(usage["completion_tokens_details"], "reasoning_tokens");
  }
  out.ok = true;
  return out;
}

}  // namespace ptxbench::llm_detail
