// libcurl, used the thread-safe way: curl_global_init exactly once, one easy
// handle per call, CURLOPT_NOSIGNAL so timeouts never raise SIGALRM in a
// multi-threaded process.
#include "agent/http/transport.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <string_view>

#include "agent/http/retry_after.hpp"

namespace ptxbench::http {

namespace {
constexpr double max_connect_timeout_s = 30.0;

// Lock-free, so setting it from a signal handler is safe.
std::atomic<bool> g_cancelled{false};
static_assert(std::atomic<bool>::is_always_lock_free);

struct response_sink {
  std::string body;
  bool too_large = false;
  std::optional<double> retry_after_s;
  std::optional<double> retry_after_ms_s;  // retry-after-ms wins over Retry-After
  std::string request_id;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<response_sink*>(user);
  if (sink->body.size() + size * count > max_body_bytes) {
    sink->too_large = true;
    return 0;  // aborts the transfer
  }
  sink->body.append(data, size * count);
  return size * count;
}

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) { return g_cancelled.load() ? 1 : 0; }

bool starts_with_nocase(const std::string& line, const char* prefix) {
  size_t n = std::char_traits<char>::length(prefix);
  if (line.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != prefix[i]) return false;
  return true;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<response_sink*>(user);
  std::string line(data, size * count);
  if (starts_with_nocase(line, "http/")) {
    // A new response begins (after a 100 Continue): forget the previous one's headers.
    sink->retry_after_s.reset();
    sink->retry_after_ms_s.reset();
    sink->request_id.clear();
  } else if (starts_with_nocase(line, "x-request-id:")) {
    std::string_view v = std::string_view(line).substr(13);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    sink->request_id = std::string(v.substr(0, 128));
  } else if (starts_with_nocase(line, "retry-after-ms:")) {
    if (auto ms = parse_retry_after(std::string_view(line).substr(15), 0))
      sink->retry_after_ms_s = *ms / 1000.0;
  } else if (starts_with_nocase(line, "retry-after:")) {
    sink->retry_after_s = parse_retry_after(std::string_view(line).substr(12), std::time(nullptr));
  }
  return size * count;
}

transport_status classify(CURLcode code) {
  switch (code) {
    case CURLE_OK: return transport_status::ok;
    case CURLE_OPERATION_TIMEDOUT: return transport_status::timeout;
    case CURLE_PARTIAL_FILE: return transport_status::truncated;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR: return transport_status::connection;
    case CURLE_ABORTED_BY_CALLBACK: return transport_status::cancelled;
    default: return transport_status::failed;
  }
}
}  // namespace

void cancel_transfers() { g_cancelled.store(true); }
bool transfers_cancelled() { return g_cancelled.load(); }
void reset_transfer_cancellation() { g_cancelled.store(false); }

void ensure_curl_initialised() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw std::runtime_error("libcurl: curl_global_init failed");
  });
}

http_session::http_session() {
  ensure_curl_initialised();
  m_handle = curl_easy_init();
  if (!m_handle) throw std::runtime_error("libcurl: curl_easy_init failed");
}

http_session::~http_session() { curl_easy_cleanup(static_cast<CURL*>(m_handle)); }

http_response http_session::post(const std::string& url, const std::vector<std::string>& headers,
                                  const std::string& body, const transfer_limits& limits) {
  return perform(url, headers, &body, limits);
}

http_response http_session::get(const std::string& url, const std::vector<std::string>& headers, double timeout_s) {
  return perform(url, headers, nullptr, {timeout_s, false, 0});
}

http_response http_session::perform(const std::string& url, const std::vector<std::string>& headers,
                                    const std::string* body, const transfer_limits& limits) {
  CURL* curl = static_cast<CURL*>(m_handle);
  curl_easy_reset(curl);  // keeps the connection cache, drops the previous attempt's options
  response_sink sink;
  char error_text[CURL_ERROR_SIZE] = {0};

  curl_slist* header_list = nullptr;
  for (const auto& h : headers) header_list = curl_slist_append(header_list, h.c_str());
  // Without this, curl waits for a 100 Continue before sending a large prompt.
  header_list = curl_slist_append(header_list, "Expect:");

  const long timeout_ms = std::max(1L, static_cast<long>(limits.timeout_s * 1000.0));
  const long connect_ms = std::min(timeout_ms, static_cast<long>(max_connect_timeout_s * 1000.0));
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  if (body) {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  } else {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &sink);
  long deadline_ms = 0;
  if (limits.stream) {
    // A stream may run long while it keeps sending; silence ends it, and so
    // does its deadline (keep-alive comments or endless text are no silence).
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, std::max(1L, timeout_ms / 1000));
    if (limits.deadline_s > 0) deadline_ms = std::max(1L, static_cast<long>(limits.deadline_s * 1000.0));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, deadline_ms);
  } else {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  }
  // http and https only, the first request and any redirect alike.
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "ptxbench");
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);

  auto start = std::chrono::steady_clock::now();
  CURLcode code = curl_easy_perform(curl);
  auto stop = std::chrono::steady_clock::now();
  curl_slist_free_all(header_list);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);  // error_text goes out of scope

  http_response r;
  r.elapsed_ms = std::chrono::duration<double, std::milli>(stop - start).count();
  r.status = sink.too_large ? transport_status::too_large : classify(code);
  // Both limits of a stream end as CURLE_OPERATION_TIMEDOUT: the clock tells them apart.
  if (r.status == transport_status::timeout && deadline_ms > 0 && r.elapsed_ms >= 0.99 * double(deadline_ms))
    r.status = transport_status::deadline;
  if (r.status == transport_status::too_large)
    r.transport_error = "the answer grew past " + std::to_string(max_body_bytes >> 20) + " MiB";
  else if (r.status != transport_status::ok)
    r.transport_error = error_text[0] ? std::string(error_text) : curl_easy_strerror(code);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.http_status);
  r.body = std::move(sink.body);
  r.retry_after_s = sink.retry_after_ms_s ? sink.retry_after_ms_s : sink.retry_after_s;
  r.request_id = std::move(sink.request_id);
  return r;
}

}  // namespace ptxbench::http
