#pragma once
// The two wire formats a provider speaks (OpenAI chat completions, Anthropic
// messages): the request each builds and how each reply is read. Internal to
// agent/llm. Parsing never throws: a reply that cannot be read is a value with
// a cause, which the caller records and retries.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/llm/provider.hpp"

namespace ptxbench::llm_detail {

// One reply read from a 2xx body: ok with the completion, or the reason it
// could not be used ("malformed JSON at byte 12: ...", "response has no choices").
struct reply_parse {
  bool ok = false;
  completion result;
  std::string cause;
};

struct wire_request {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
};

// OpenAI-compatible: POST {base_url}/chat/completions, Bearer key when given.
wire_request openai_request(const provider_config& c, const std::string& api_key,
                            const std::vector<chat_message>& messages);
reply_parse openai_parse_reply(const std::string& body);

// Anthropic: POST {base_url}/v1/messages, system prompt in the top-level field.
wire_request anthropic_request(const provider_config& c, const std::string& api_key,
                               const std::vector<chat_message>& messages);
reply_parse anthropic_parse_reply(const std::string& body);

// Streamed replies (server-sent events), read into the same completion as a
// plain reply; a stream without its end marker is a "truncated body" cause.
reply_parse openai_parse_stream(const std::string& body);
reply_parse anthropic_parse_stream(const std::string& body);
// A body that starts like an event stream (a field line or a comment) is read
// as one; anything else as a plain reply (a server may ignore "stream").
bool looks_like_event_stream(const std::string& body);

// Moves inline <tag>...</tag> reasoning out of c.text into c.reasoning, for
// each tag name; see think_tags.cpp for the shapes handled.
void split_inline_reasoning(completion& c, const std::vector<std::string>& tags);

// Whether the request asks for a stream: the stream field, or "stream": true in extra.
bool wants_stream(const provider_config& c);

// Parses a body as a JSON object; on failure returns false and sets `cause` to
// "empty body", "malformed JSON at byte N: <reason>", "response is not a JSON
// object", or, when the document ends before it is complete, "truncated body:
// malformed JSON at byte N: ...", or "JSON nested deeper than 64 levels".
bool parse_json_object(const std::string& body, nlohmann::json& out, std::string& cause);

// The human-readable message of an error body: error.message (OpenAI and
// Anthropic), a string `error`, or `message`; else the body itself, shortened.
std::string error_message_of(const std::string& body);

// {base_url} without trailing slashes, followed by `suffix`.
std::string join_url(const std::string& base_url, const std::string& suffix);

// Applies `extra` onto `body` as a JSON merge patch (RFC 7386): extra keys
// replace the defaults and a null removes one (e.g. "max_tokens": null).
void merge_extra(nlohmann::json& body, const nlohmann::json& extra);

// Reads an optional non-negative integer token count; absent or null is 0.
int token_count(const nlohmann::json& parent, const char* key);

}  // namespace ptxbench::llm_detail
