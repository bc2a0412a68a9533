// libFuzzer target: the server-sent-event parser (fed in two pieces, split
// where the first input byte says, so chunk boundaries are fuzzed too) and
// both streamed wire formats on the same bytes, plus the inline-reasoning split.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/llm/sse.hpp"
#include "agent/llm/wire_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench::llm_detail;
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t split = body.empty() ? 0 : data[0] % (body.size() + 1);
  sse_parser parser(sse_limits{4096, 8192, 256});
  std::vector<sse_event> events;
  if (parser.feed(std::string_view(body).substr(0, split), events))
    if (parser.feed(std::string_view(body).substr(split), events)) parser.finish(events);
  (void)openai_parse_stream(body);
  (void)anthropic_parse_stream(body);
  ptxbench::completion c;
  c.text = body;
  split_inline_reasoning(c, {"think", "t"});
  return 0;
}
