// The device functions a PTX module declares but does not define: the CUDA
// device runtime's system calls (malloc, free, vprintf, __assertfail, the
// device-side launch and synchronisation calls of dynamic parallelism) that
// the linker and driver resolve. None is needed by a task, and each is state
// or work outside what the harness resets and counts (a device-heap block
// outlives the run and the candidate; a device-side launch runs a kernel the
// manifest never named), so the format stage refuses them.
#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/ptx_text.hpp"

#include <set>

namespace ptxbench {

std::vector<ptx_external_function> ptx_external_functions(const std::string& ptx) {
  const std::vector<ptx_text::token> tokens = ptx_text::tokenize(ptx_text::blank_comments_and_strings(ptx));
  std::vector<ptx_external_function> out;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (!tokens[i].is_word || tokens[i].text != ".extern") continue;
    size_t j = i + 1;
    while (j < tokens.size() && tokens[j].is_word && tokens[j].text != ".func" && tokens[j].text[0] == '.') ++j;
    if (j >= tokens.size() || tokens[j].text != ".func") continue;
    ++j;
    if (j < tokens.size() && tokens[j].text == "(") {  // the return parameters
      int depth = 0;
      for (; j < tokens.size(); ++j) {
        depth += tokens[j].text == "(" ? 1 : tokens[j].text == ")" ? -1 : 0;
        if (depth == 0) break;
      }
      ++j;
    }
    if (j < tokens.size() && tokens[j].is_word) out.push_back({tokens[j].text, tokens[i].line});
  }
  return out;
}

ptx_timer_read ptx_timer_read_of(const std::string& ptx) {
  static const std::set<std::string> timers = [] {
    std::set<std::string> s{"%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"};
    for (int i = 0; i < 8; ++i) {
      s.insert("%pm" + std::to_string(i));
      s.insert("%pm" + std::to_string(i) + "_64");
    }
    return s;
  }();
  for (const ptx_text::token& t : ptx_text::tokenize(ptx_text::blank_comments_and_strings(ptx)))
    if (t.is_word && timers.count(t.text)) return {t.text, t.line};
  return {};
}

std::string system_calls_problem(const std::string& ptx) {
  const std::vector<ptx_external_function> calls = ptx_external_functions(ptx);
  if (calls.empty()) return "";
  std::string names;
  for (size_t i = 0; i < calls.size() && i < 8; ++i)
    names += (i ? ", " : "") + calls[i].name + " (line " + std::to_string(calls[i].line) + ")";
  if (calls.size() > 8) names += ", ...";
  return "the PTX declares external device functions: " + names +
         ". Device system calls (malloc/free, printf, assert, device-side launches) are refused: a kernel may keep "
         "state only in the buffers the harness resets, and run only the launches its manifest names";
}

}  // namespace ptxbench
