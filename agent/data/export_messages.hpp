#pragma once
// Chat messages of export records: the prompt as it was sent, the trained
// replies with their reasoning in the chosen mode, and the conversation of a
// correction example under each history policy (export.hpp).
#include <nlohmann/json.hpp>
#include <string>

#include "agent/data/export.hpp"

namespace ptxbench::data {

// A message with role and content, plus `reasoning_content` ("" unless given)
// in field mode so every message of an export has the same columns.
nlohmann::json plain_message(const std::string& role, const std::string& content, reasoning_mode mode);
// The reply of a turn as a trained assistant message: its reasoning dropped,
// in `reasoning_content`, or inline as "<think>\n...\n</think>\n\n" + content.
nlohmann::json reply_message(const turn_row& turn, reasoning_mode mode);
// A stored prompt with every message reduced to role and content (strings).
nlohmann::json prompt_messages(const nlohmann::json& stored, reasoning_mode mode);
// The first system message and the first user message (the task) of a prompt.
nlohmann::json system_and_task(const turn_row& turn, reasoning_mode mode);
// The user message that carried the feedback in `turn`'s prompt: its last user
// message when that is not the task itself, else the stored feedback column.
std::string feedback_message(const turn_row& turn);
// The prompt of the correction whose completion is turns[fix]: the task, then
// the failed attempt turns[fix-1] and its feedback (last), or every attempt
// since round 0 and its feedback (full). Earlier replies carry no reasoning.
nlohmann::json correction_prompt(const trajectory_data& t, size_t fix, export_history history, reasoning_mode mode);

}  // namespace ptxbench::data
