#include "agent/data/export_messages.hpp"

namespace ptxbench::data {
namespace {

using json = nlohmann::json;

std::string text_of(const json& m, const char* key) {
  if (!m.is_object() || !m.contains(key)) return "";
  const auto& v = m[key];
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
}

}  // namespace

json plain_message(const std::string& role, const std::string& content, reasoning_mode mode) {
  json m = {{"role", role}, {"content", content}};
  if (mode == reasoning_mode::field) m["reasoning_content"] = "";
  return m;
}

json reply_message(const turn_row& turn, reasoning_mode mode) {
  switch (mode) {
    case reasoning_mode::drop: return plain_message("assistant", turn.reply, mode);
    case reasoning_mode::field: {
      json m = plain_message("assistant", turn.reply, mode);
      m["reasoning_content"] = turn.reasoning;
      return m;
    }
    case reasoning_mode::inline_think:
      // A reply without reasoning gets no empty block: templates of reasoning
      // models insert their own empty one where they need it.
      if (turn.reasoning.empty()) return plain_message("assistant", turn.reply, mode);
      return plain_message("assistant", "<think>\n" + turn.reasoning + "\n</think>\n\n" + turn.reply, mode);
  }
  return plain_message("assistant", turn.reply, mode);
}

json prompt_messages(const json& stored, reasoning_mode mode) {
  json out = json::array();
  if (!stored.is_array()) return out;
  for (const auto& m : stored) {
    if (!m.is_object() || !m.contains("role")) continue;
    out.push_back(plain_message(text_of(m, "role"), text_of(m, "content"), mode));
  }
  return out;
}

json system_and_task(const turn_row& turn, reasoning_mode mode) {
  json out = json::array();
  bool have_system = false;
  for (const auto& m : turn.messages) {
    if (!m.is_object() || !m.contains("role")) continue;
    if (m["role"] == "system" && !have_system && out.empty()) {
      out.push_back(plain_message("system", text_of(m, "content"), mode));
      have_system = true;
    } else if (m["role"] == "user") {
      out.push_back(plain_message("user", text_of(m, "content"), mode));
      break;
    }
  }
  return out;
}

std::string feedback_message(const turn_row& turn) {
  int users = 0;
  std::string last;
  for (const auto& m : turn.messages) {
    if (m.is_object() && m.value("role", "") == "user") {
      ++users;
      last = text_of(m, "content");
    }
  }
  return users >= 2 ? last : turn.feedback;
}

json correction_prompt(const trajectory_data& t, size_t fix, export_history history, reasoning_mode mode) {
  size_t first = history == export_history::full ? 0 : fix - 1;
  json messages = system_and_task(t.turns[first].turn, mode);
  for (size_t j = first; j < fix; ++j) {
    messages.push_back(plain_message("assistant", t.turns[j].turn.reply, mode));
    messages.push_back(plain_message("user", feedback_message(t.turns[j + 1].turn), mode));
  }
  return messages;
}

}  // namespace ptxbench::data
