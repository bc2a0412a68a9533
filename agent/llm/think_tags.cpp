// Inline reasoning: servers without a reasoning parser return the model's
// thinking inside the content as <think>...</think>. It is reasoning, not the
// answer, so it moves to completion::reasoning and never goes back to the
// model in the history. Three shapes occur: a complete pair; only the closing
// tag (the chat template opened it in the prompt); only the opening tag (the
// reply was cut off while thinking).
#include "agent/llm/wire_format.hpp"

namespace ptxbench::llm_detail {

namespace {
void append(std::string& reasoning, std::string_view part) {
  if (part.empty()) return;
  if (!reasoning.empty()) reasoning += "\n\n";
  reasoning.append(part);
}
}  // namespace

void split_inline_reasoning(completion& c, const std::vector<std::string>& tags) {
  bool moved = false;
  for (const auto& tag : tags) {
    const std::string open = "<" + tag + ">";
    const std::string close = "</" + tag + ">";
    std::string kept;
    std::string_view rest = c.text;
    bool first = true;
    for (;;) {
      const size_t o = rest.find(open);
      const size_t e = rest.find(close);
      if (first && e != std::string_view::npos && (o == std::string_view::npos || e < o)) {
        // Only a closing tag leads: everything before it was thinking.
        append(c.reasoning, rest.substr(0, e));
        rest.remove_prefix(e + close.size());
        moved = true;
        first = false;
        continue;
      }
      first = false;
      if (o == std::string_view::npos) break;
      kept.append(rest.substr(0, o));
      rest.remove_prefix(o + open.size());
      const size_t end = rest.find(close);
      moved = true;
      if (end == std::string_view::npos) {  // cut off while thinking
        append(c.reasoning, rest);
        rest = {};
        break;
      }
      append(c.reasoning, rest.substr(0, end));
      rest.remove_prefix(end + close.size());
    }
    kept.append(rest);
    c.text = std::move(kept);
  }
  if (moved) {
    const size_t start = c.text.find_first_not_of(" \t\r\n");
    c.text.erase(0, start == std::string::npos ? c.text.size() : start);
  }
}

}  // namespace ptxbench::llm_detail
