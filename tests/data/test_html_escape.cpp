#include <doctest/doctest.h>

#include "agent/data/html.hpp"

using ptxbench::data::html_escape;

TEST_CASE("html_escape makes markup and quotes and ampersands inert") {
  CHECK(html_escape("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(html_escape("a & b \"c\" 'd'") == "a &amp; b &quot;c&quot; &#39;d&#39;");
  CHECK(html_escape("&lt;") == "&amp;lt;");  // already-escaped text is escaped again, not trusted
  CHECK(html_escape("") == "");
  CHECK(html_escape("plain ptx: mov.u32 %r1, 0;") == "plain ptx: mov.u32 %r1, 0;");
  CHECK(html_escape("\xe2\x9c\x93 \xff") == "\xe2\x9c\x93 \xff");  // bytes outside ASCII untouched
}
