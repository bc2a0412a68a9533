// The libcurl transport: the schemes it speaks.
#include <doctest/doctest.h>

#include "agent/http/transport.hpp"
#include "agent/http/url.hpp"

using namespace ptxbench::http;

// A base_url of file:///etc/passwd made libcurl read the file as the model's
// reply (and the remote evaluator's or any other caller's URL the same).
TEST_CASE("the transport speaks http and https only - file and other schemes fail without a byte read") {
  http_session s;
  for (const char* url : {"file:///etc/hostname", "FILE:///etc/hostname", "dict://127.0.0.1:1/x", "gopher://127.0.0.1:1/"}) {
    CAPTURE(url);
    const http_response get = s.get(url, {}, 5);
    CHECK(get.status == transport_status::failed);
    CHECK(get.body.empty());
    const http_response post = s.post(url, {}, "x", {5, false, 0});
    CHECK(post.status == transport_status::failed);
    CHECK(post.body.empty());
  }
}

TEST_CASE("http urls are told apart from the rest in any case") {
  for (const char* url : {"http://h", "https://h:1/v1", "HTTP://H", "Https://x"}) CHECK(is_http_url(url));
  for (const char* url : {"", "http:/h", "file:///x", "ftp://h", "h:80", "//h", " http://h", "httpx://h"})
    CHECK_FALSE(is_http_url(url));
}
