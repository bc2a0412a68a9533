// Streamed replies (stream: true) of both wire formats, read from the
// server-sent events into the same completion a plain reply gives. A stream
// that ends before its end marker (OpenAI [DONE] or a finish reason, Anthropic
// message_stop) was cut in transit: a retryable cause, like a truncated body.
#include "agent/llm/sse.hpp"
#include "agent/llm/wire_format.hpp"

namespace ptxbench::llm_detail {

namespace {
std::string text_of(const nlohmann::json& parent, const char* key) {
  if (!parent.is_object()) return "";
  auto it = parent.find(key);
  return it != parent.end() && it->is_string() ? it->get<std::string>() : "";
}

const nlohmann::json* object_at(const nlohmann::json& parent, const char* key) {
  if (!parent.is_object()) return nullptr;
  auto it = parent.find(key);
  return it != parent.end() && it->is_object() ? &*it : nullptr;
}

// The events of a body, or false with the cause.
bool read_events(const std::string& body, std::vector<sse_event>& events, std::string& cause) {
  std::string error;
  if (!parse_sse(body, events, error)) {
    cause = "event stream: " + error;
    return false;
  }
  if (events.empty()) {
    cause = body.find_first_not_of(" \t\r\n") == std::string::npos ? "empty body" : "event stream has no events";
    return false;
  }
  return true;
}

bool event_json(const sse_event& e, size_t index, nlohmann::json& out, std::string& cause) {
  out = nlohmann::json::parse(e.data, nullptr, false);
  if (out.is_discarded() || !out.is_object()) {
    cause = "event stream: event " + std::to_string(index) + " is not a JSON object";
    return false;
  }
  return true;
}

std::string stream_error(const nlohmann::json& j) {
  const auto& e = j["error"];
  if (e.is_string()) return "stream error: " + e.get<std::string>();
  std::string message = text_of(e, "message");
  return "stream error: " + (message.empty() ? e.dump() : message);
}
}  // namespace

bool looks_like_event_stream(const std::string& body) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return false;
  const std::string_view head = std::string_view(body).substr(first);
  if (head.front() == ':') return true;
  for (std::string_view field : {"data:", "event:", "id:", "retry:"})
    if (head.substr(0, field.size()) == field) return true;
  return false;
}

reply_parse openai_parse_stream(const std::string& body) {
  reply_parse out;
  std::vector<sse_event> events;
  if (!read_events(body, events, out.cause)) return out;
  completion& r = out.result;
  bool done = false;
  for (size_t i = 0; i < events.size() && !done; ++i) {
    if (events[i].data == "[DONE]") {
      done = true;
      break;
    }
    nlohmann::json j;
    if (!event_json(events[i], i, j, out.cause)) return out;
    if (j.contains("error")) {
      out.cause = stream_error(j);
      return out;
    }
    if (auto m = text_of(j, "model"); !m.empty()) r.model = m;
    if (const auto* usage = object_at(j, "usage")) {
      r.prompt_tokens = token_count(*usage, "prompt_tokens");
      r.completion_tokens = token_count(*usage, "completion_tokens");
      if (const auto* details = object_at(*usage, "completion_tokens_details"))
        r.reasoning_tokens = token_count(*details, "reasoning_tokens");
    }
    auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array()) continue;
    for (const auto& choice : *choices) {
      if (!choice.is_object() || (choice.contains("index") && choice["index"] != 0)) continue;
      if (const auto* delta = object_at(choice, "delta")) {
        r.text += text_of(*delta, "content");
        r.reasoning += text_of(*delta, "reasoning_content");
        r.reasoning += text_of(*delta, "reasoning");
      }
      if (auto f = text_of(choice, "finish_reason"); !f.empty()) r.finish_reason = f;
    }
  }
  if (!done && r.finish_reason.empty()) {
    out.cause = "truncated body: event stream ended before [DONE] or a finish reason";
    return out;
  }
  out.ok = true;
  return out;
}

reply_parse anthropic_parse_stream(const std::string& body) {
  reply_parse out;
  std::vector<sse_event> events;
  if (!read_events(body, events, out.cause)) return out;
  completion& r = out.result;
  bool stopped = false;
  for (size_t i = 0; i < events.size(); ++i) {
    nlohmann::json j;
    if (!event_json(events[i], i, j, out.cause)) return out;
    std::string type = text_of(j, "type");
    if (type.empty()) type = events[i].type;
    if (type == "error" || j.contains("error")) {
      out.cause = stream_error(j);
      return out;
    }
    if (type == "message_start") {
      if (const auto* message = object_at(j, "message")) {
        if (auto m = text_of(*message, "model"); !m.empty()) r.model = m;
        if (const auto* usage = object_at(*message, "usage")) {
          r.prompt_tokens = token_count(*usage, "input_tokens");
          r.completion_tokens = token_count(*usage, "output_tokens");
        }
      }
    } else if (type == "content_block_start") {
      if (const auto* block = object_at(j, "content_block")) {
        const std::string kind = text_of(*block, "type");
        if (kind == "text") r.text += text_of(*block, "text");
        if (kind == "thinking") {
          if (!r.reasoning.empty()) r.reasoning += "\n\n";
          r.reasoning += text_of(*block, "thinking");
        }
      }
    } else if (type == "content_block_delta") {
      if (const auto* delta = object_at(j, "delta")) {
        const std::string kind = text_of(*delta, "type");
        if (kind == "text_delta") r.text += text_of(*delta, "text");
        if (kind == "thinking_delta") r.reasoning += text_of(*delta, "thinking");
      }
    } else if (type == "message_delta") {
      if (const auto* delta = object_at(j, "delta"))
        if (auto f = text_of(*delta, "stop_reason"); !f.empty()) r.finish_reason = f;
      if (const auto* usage = object_at(j, "usage"))
        if (usage->contains("output_tokens")) r.completion_tokens = token_count(*usage, "output_tokens");
    } else if (type == "message_stop") {
      stopped = true;
      break;
    }
  }
  if (!stopped) {
    out.cause = "truncated body: event stream ended before message_stop";
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace ptxbench::llm_detail
