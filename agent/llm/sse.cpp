#include "agent/llm/sse.hpp"

namespace ptxbench::llm_detail {

bool sse_parser::fail(std::string message) {
  if (m_error.empty()) m_error = std::move(message);
  return false;
}

bool sse_parser::feed(std::string_view bytes, std::vector<sse_event>& out) {
  if (!m_error.empty()) return false;
  size_t i = 0;
  while (i < bytes.size()) {
    if (m_after_cr && bytes[i] == '\n') ++i;  // the LF of a CRLF split across feeds
    m_after_cr = false;
    if (i >= bytes.size()) break;
    const size_t end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      if (m_line.size() + (bytes.size() - i) > m_limits.max_line_bytes)
        return fail("event stream line longer than " + std::to_string(m_limits.max_line_bytes) + " bytes");
      m_line.append(bytes.substr(i));
      break;
    }
    if (m_line.size() + (end - i) > m_limits.max_line_bytes)
      return fail("event stream line longer than " + std::to_string(m_limits.max_line_bytes) + " bytes");
    m_line.append(bytes.substr(i, end - i));
    m_after_cr = bytes[end] == '\r';
    i = end + 1;
    std::string text;
    text.swap(m_line);
    if (!line(text, out)) return false;
  }
  return true;
}

bool sse_parser::finish(std::vector<sse_event>& out) {
  if (!m_error.empty()) return false;
  if (!m_line.empty()) {
    std::string text;
    text.swap(m_line);
    if (!line(text, out)) return false;
  }
  return dispatch(out);
}

bool sse_parser::line(std::string_view text, std::vector<sse_event>& out) {
  if (text.empty()) return dispatch(out);
  if (text.front() == ':') return true;  // a comment (keep-alive)
  const size_t colon = text.find(':');
  std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (m_event.data.size() + value.size() + 1 > m_limits.max_event_bytes)
      return fail("event stream event larger than " + std::to_string(m_limits.max_event_bytes) + " bytes");
    m_event.data.append(value);
    m_event.data.push_back('\n');
    m_has_data = true;
  } else if (field == "event") {
    if (value.size() > m_limits.max_event_bytes) return fail("event stream event name too long");
    m_event.type.assign(value);
  }
  // id and retry matter to browsers reconnecting, not to one reply.
  return true;
}

bool sse_parser::dispatch(std::vector<sse_event>& out) {
  if (!m_has_data) {
    m_event = {};
    return true;
  }
  if (++m_events > m_limits.max_events)
    return fail("event stream has more than " + std::to_string(m_limits.max_events) + " events");
  m_event.data.pop_back();  // the "\n" after the last data line
  out.push_back(std::move(m_event));
  m_event = {};
  m_has_data = false;
  return true;
}

bool parse_sse(std::string_view body, std::vector<sse_event>& out, std::string& error, sse_limits limits) {
  sse_parser parser(limits);
  const bool ok = parser.feed(body, out) && parser.finish(out);
  error = parser.error();
  return ok;
}

}  // namespace ptxbench::llm_detail
