// Streamed replies (stream: true) of both wire formats, read from the
// server-sent events into the same completion a plain reply gives. A stream
// that ends without its end (OpenAI: a finish reason, [DONE] or not;
// Anthropic: message_stop) was cut in transit, and an event that is not what
// the format says (no choices, text that is not text) is no reply: causes
// the provider retries, like a truncated body. Each event is read with the
// bounded JSON parser.
#include "agent/llm/sse.hpp"
#include "agent/llm/wire_format.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/common/utf8.hpp"

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
  json_parse_outcome parsed = try_parse_json_bounded(e.data);
  if (!parsed.ok || !parsed.value.is_object()) {
    cause = "event stream: event " + std::to_string(index) + " is not a JSON object" +
            (parsed.too_deep ? " (" + parsed.message() + ")" : "");
    return false;
  }
  out = std::move(parsed.value);
  return true;
}

std::string stream_error(const nlohmann::json& j) {
  const auto& e = j["error"];
  std::string message = e.is_string() ? e.get<std::string>() : text_of(e, "message");
  if (message.empty()) message = json_text(e);  // nested at most k_max_json_depth levels
  return "stream error: " + utf8_shortened(message, 300);
}

// Appends parent[key] to `out` when it is text; absent or null adds nothing.
// Anything else (a number, an object) is no reply: false.
bool append_text(const nlohmann::json& parent, const char* key, std::string& out) {
  if (!parent.is_object()) return true;
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out += it->get_ref<const std::string&>();
  return true;
}

reply_parse failure(reply_parse out, std::string cause) {
  out.cause = std::move(cause);
  return out;
}

std::string not_text(size_t index, const std::string& field) {
  return "event stream: event " + std::to_string(index) + ": " + field + " is not text";
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
  for (size_t i = 0; i < events.size(); ++i) {
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
    // Every chunk of a chat completion stream has a choices array (the last
    // one, with the usage, an empty one).
    const auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array()) {
      out.cause = "event stream: event " + std::to_string(i) + " has no choices";
      return out;
    }
    if (auto m = text_of(j, "model"); !m.empty()) r.model = m;
    if (const auto* usage = object_at(j, "usage")) {
      r.prompt_tokens = token_count(*usage, "prompt_tokens");
      r.completion_tokens = token_count(*usage, "completion_tokens");
      if (const auto* details = object_at(*usage, "completion_tokens_details"))
        r.reasoning_tokens = token_count(*details, "reasoning_tokens");
    }
    for (const auto& choice : *choices) {
      if (!choice.is_object() || (choice.contains("index") && choice["index"] != 0)) continue;
      if (const auto* delta = object_at(choice, "delta")) {
        if (!append_text(*delta, "content", r.text)) return failure(std::move(out), not_text(i, "delta.content"));
        if (!append_text(*delta, "reasoning_content", r.reasoning) || !append_text(*delta, "reasoning", r.reasoning))
          return failure(std::move(out), not_text(i, "delta.reasoning"));
      }
      if (auto f = text_of(choice, "finish_reason"); !f.empty()) r.finish_reason = f;
    }
  }
  // A proxy that loses the upstream may still end the stream with its own
  // [DONE]: only a finish reason says the model's reply is whole.
  if (r.finish_reason.empty()) {
    out.cause = done ? "truncated body: event stream ended with [DONE] but no finish reason"
                     : "truncated body: event stream ended before [DONE] or a finish reason";
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
        if (kind == "text" && !append_text(*block, "text", r.text))
          return failure(std::move(out), not_text(i, "content_block.text"));
        if (kind == "thinking") {
          if (!r.reasoning.empty()) r.reasoning += "\n\n";
          if (!append_text(*block, "thinking", r.reasoning))
            return failure(std::move(out), not_text(i, "content_block.thinking"));
        }
      }
    } else if (type == "content_block_delta") {
      if (const auto* delta = object_at(j, "delta")) {
        const std::string kind = text_of(*delta, "type");
        if (kind == "text_delta" && !append_text(*delta, "text", r.text))
          return failure(std::move(out), not_text(i, "delta.text"));
        if (kind == "thinking_delta" && !append_text(*delta, "thinking", r.reasoning))
          return failure(std::move(out), not_text(i, "delta.thinking"));
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
