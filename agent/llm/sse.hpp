#pragma once
// Server-sent events (the text/event-stream of a streamed reply), read the
// way the WHATWG HTML standard describes: lines end in CRLF, LF or CR; a
// blank line dispatches the event; "data:" lines are joined with "\n";
// lines starting with ':' are comments. Bounded: a line, an event's data and
// the number of events each have a limit, past which the parser stops with an
// error rather than growing. No libcurl here, so the parser can be fuzzed.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::llm_detail {

struct sse_event {
  std::string type;  // the "event:" field; "" when the stream sent none ("message")
  std::string data;
};

struct sse_limits {
  size_t max_line_bytes = size_t(4) << 20;
  size_t max_event_bytes = size_t(16) << 20;
  size_t max_events = size_t(1) << 20;
};

class sse_parser {
 public:
  explicit sse_parser(sse_limits limits = {}) : m_limits(limits) {}
  // Reads more of the stream; complete events are appended to `out`. Returns
  // false once a limit was passed (error() says which); later input is ignored.
  bool feed(std::string_view bytes, std::vector<sse_event>& out);
  // The stream ended: a last event not followed by a blank line is dispatched.
  bool finish(std::vector<sse_event>& out);
  const std::string& error() const { return m_error; }

 private:
  bool line(std::string_view text, std::vector<sse_event>& out);
  bool dispatch(std::vector<sse_event>& out);
  bool fail(std::string message);

  sse_limits m_limits;
  std::string m_line;
  bool m_after_cr = false;  // the previous byte was CR: a following LF belongs to it
  bool m_has_data = false;
  sse_event m_event;
  size_t m_events = 0;
  std::string m_error;
};

// A whole body read as events (feed + finish); false with `error` set when a
// limit was passed.
bool parse_sse(std::string_view body, std::vector<sse_event>& out, std::string& error, sse_limits limits = {});

}  // namespace ptxbench::llm_detail
