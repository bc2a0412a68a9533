#include <doctest/doctest.h>

#include <chrono>

#include "evaluator/api/candidate.hpp"

using namespace ptxbench;

TEST_CASE("the last ptx and json blocks of a reply count") {
  std::string reply =
      "First try:\n```ptx\n.entry old() { ret; }\n```\nBetter:\n```ptx\n.version 8.7\n.entry k() { ret; }\n```\n"
      "```json\n{\"launches\": []}\n```\nand the final manifest\n```json\n{\"launches\": [1]}\n```\n";
  auto c = extract_candidate(reply);
  CHECK(c.problem.empty());
  CHECK(c.ptx == ".version 8.7\n.entry k() { ret; }\n");
  CHECK(c.manifest_text == "{\"launches\": [1]}\n");
}

TEST_CASE("missing blocks are format problems that say what is missing") {
  CHECK(extract_candidate("no code at all").problem.find("no ```ptx block") != std::string::npos);
  auto c = extract_candidate("```ptx\n.entry k() { ret; }\n```\n");
  CHECK(c.problem.find("no ```json launch manifest") != std::string::npos);
  c = extract_candidate("```ptx\n.version 8.7\n```\n```json\n{}\n```");
  CHECK(c.problem.find("no .entry kernel") != std::string::npos);
}

TEST_CASE("a reply cut off inside a block says so") {
  auto c = extract_candidate("```ptx\n.entry k() {\n  add.s32 %r1, %r2,");
  CHECK(c.problem.find("cut off by the token limit") != std::string::npos);
}

TEST_CASE("tildes - longer fences and info strings are understood") {
  auto c = extract_candidate("~~~ptx\n.entry a() { ret; }\n~~~\n````json title=manifest\n{\"x\": \"```\"}\n````\n");
  CHECK(c.problem.empty());
  CHECK(c.manifest_text == "{\"x\": \"```\"}\n");
}

TEST_CASE("a long fence line followed by many lines is extracted in linear time") {
  // Used to rebuild the fence string on every line: 200 000 lines after a
  // 200 000-character fence took tens of seconds.
  std::string reply = std::string(200000, '`') + "ptx\n";
  for (int i = 0; i < 200000; ++i) reply += "x\n";
  auto start = std::chrono::steady_clock::now();
  auto c = extract_candidate(reply);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 2.0);
  CHECK(c.problem.find("unterminated") != std::string::npos);
}
