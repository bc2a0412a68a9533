#include "agent/loop/context_budget.hpp"

#include <algorithm>
#include <cctype>

namespace ptxbench {
namespace {

// Replaces every ```ptx ... ``` block of `text` by a one-line marker.
std::string elide_ptx(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (true) {
    size_t open = text.find("```ptx", at);
    if (open == std::string::npos) break;
    size_t body = text.find('\n', open);
    size_t close = body == std::string::npos ? std::string::npos : text.find("```", body + 1);
    if (close == std::string::npos) break;
    size_t lines = static_cast<size_t>(std::count(text.begin() + body, text.begin() + close, '\n'));
    out.append(text, at, open - at);
    out += "[PTX elided to fit the context: " + std::to_string(lines) + " lines]";
    at = close + 3;
  }
  out.append(text, at, std::string::npos);
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

int estimate_tokens(const std::vector<chat_message>& messages) {
  size_t bytes = 0;
  for (const auto& m : messages) bytes += m.content.size() + 8;  // a few tokens of role markup per message
  return static_cast<int>((bytes + 2) / 3);
}

std::vector<chat_message> fit_context(std::vector<chat_message> messages, int max_tokens) {
  if (messages.size() <= 4 || estimate_tokens(messages) <= max_tokens) return messages;
  // messages: [0] system, [1] task, then pairs at 2+2k (attempt), 3+2k (feedback).
  const size_t last_attempt = messages.size() - 2;
  for (size_t i = 2; i < last_attempt && estimate_tokens(messages) > max_tokens; i += 2) {
    messages[i].content = elide_ptx(messages[i].content);
  }
  while (messages.size() > 4 && estimate_tokens(messages) > max_tokens) {
    messages.erase(messages.begin() + 2, messages.begin() + 4);
  }
  return messages;
}

bool is_context_length_error(const completion_outcome& outcome) {
  if (outcome.ok || outcome.failures.empty()) return false;
  const auto& last = outcome.failures.back();
  if (last.http_status != 400 && last.http_status != 413) return false;
  const std::string c = lower(last.cause);
  for (const char* needle : {"context length", "context_length", "context size", "context window", "prompt is too long",
                             "maximum context", "too many tokens", "exceeds the available context"}) {
    if (c.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace ptxbench
