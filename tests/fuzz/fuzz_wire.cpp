// Reply bodies of both wire formats (OpenAI chat completions, Anthropic
// messages) and the error text taken from a failed call's body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/llm/wire_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  ptxbench::llm_detail::openai_parse_reply(body);
  ptxbench::llm_detail::anthropic_parse_reply(body);
  ptxbench::llm_detail::error_message_of(body);
  return 0;
}
