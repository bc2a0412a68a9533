#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "agent/viewer/line_diff.hpp"

using namespace ptxbench::viewer;

namespace {

std::string side(const std::vector<diff_line>& d, diff_op drop) {
  std::string out;
  for (const auto& l : d) {
    if (l.op != drop) out += l.text + "\n";
  }
  return out;
}

int changes(const std::vector<diff_line>& d) {
  int n = 0;
  for (const auto& l : d) n += l.op != diff_op::same;
  return n;
}

}  // namespace

TEST_CASE("line diff marks removed and added lines with their line numbers") {
  auto d = diff_lines("a\nb\nc\n", "a\nx\nc\nd\n");
  REQUIRE(d.size() == 5);
  CHECK((d[0].op == diff_op::same && d[0].text == "a" && d[0].old_line == 1 && d[0].new_line == 1));
  CHECK((d[1].op == diff_op::removed && d[1].text == "b" && d[1].old_line == 2 && d[1].new_line == 0));
  CHECK((d[2].op == diff_op::added && d[2].text == "x" && d[2].new_line == 2));
  CHECK((d[3].op == diff_op::same && d[3].text == "c" && d[3].old_line == 3 && d[3].new_line == 3));
  CHECK((d[4].op == diff_op::added && d[4].text == "d" && d[4].new_line == 4));
  CHECK(changes(diff_lines("same\n", "same\n")) == 0);
  CHECK(diff_lines("", "").empty());
  CHECK(changes(diff_lines("", "x\ny\n")) == 2);
}

TEST_CASE("line diff is minimal and rebuilds both sides on random inputs") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string a, b;
    int na = rng() % 12, nb = rng() % 12;
    for (int i = 0; i < na; ++i) a += std::string(1, static_cast<char>('a' + rng() % 4)) + "\n";
    for (int i = 0; i < nb; ++i) b += std::string(1, static_cast<char>('a' + rng() % 4)) + "\n";
    auto d = diff_lines(a, b);
    CHECK(side(d, diff_op::added) == a);
    CHECK(side(d, diff_op::removed) == b);
    // Minimal: changes = |a| + |b| - 2 * LCS, with the LCS computed independently.
    auto la = split_lines(a), lb = split_lines(b);
    std::vector<std::vector<int>> lcs(la.size() + 1, std::vector<int>(lb.size() + 1, 0));
    for (size_t i = 1; i <= la.size(); ++i)
      for (size_t j = 1; j <= lb.size(); ++j)
        lcs[i][j] = la[i - 1] == lb[j - 1] ? lcs[i - 1][j - 1] + 1 : std::max(lcs[i - 1][j], lcs[i][j - 1]);
    CHECK(changes(d) == static_cast<int>(la.size() + lb.size()) - 2 * lcs[la.size()][lb.size()]);
  }
}

TEST_CASE("line diff of inputs too large for the table still rebuilds both sides") {
  std::string a = "head\nx1\nx2\ntail\n", b = "head\ny1\ntail\n";
  auto d = diff_lines(a, b, 1);
  CHECK(side(d, diff_op::added) == a);
  CHECK(side(d, diff_op::removed) == b);
  CHECK(d.front().text == "head");
  CHECK(d.back().text == "tail");
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Lines GNU diff marks changed (its output lines starting with < or >).
int gnu_diff_changes(const std::string& a, const std::string& b) {
  std::string command = "diff '" + a + "' '" + b + "'";
  int n = 0;
  if (std::FILE* pipe = popen(command.c_str(), "r")) {
    char buf[8192];
    bool line_start = true;
    while (std::fgets(buf, sizeof buf, pipe)) {
      if (line_start && (buf[0] == '<' || buf[0] == '>')) ++n;
      size_t len = std::strlen(buf);
      line_start = len > 0 && buf[len - 1] == '\n';
    }
    pclose(pipe);
  }
  return n;
}

}  // namespace

TEST_CASE("line diff of the two attention forward solutions agrees with GNU diff within 1%") {
  const std::string dir = std::string(PTXBENCH_SOURCE_DIR) + "/tasks/solutions/";
  const std::string a = dir + "attention_fwd_bf16_wgmma/kernel.ptx";
  const std::string b = dir + "attention_fwd_bf16_wgmma_causal/kernel.ptx";
  const int expected = gnu_diff_changes(a, b);
  REQUIRE(expected > 1000);  // the kernels differ in thousands of lines: a real test of scale
  auto old_text = read_file(a), new_text = read_file(b);
  auto d = diff_lines(old_text, new_text);
  CHECK(side(d, diff_op::added) == old_text);
  CHECK(side(d, diff_op::removed) == new_text);
  const int got = changes(d);
  MESSAGE("ptxbench " << got << " changed lines, GNU diff " << expected);
  CHECK(std::abs(got - expected) <= expected / 100);
}
