#pragma once
// Keeping a repair conversation inside the model's context (config
// max_context_tokens). A reply with attention-sized PTX is ~100 KB, so
// history "all" outgrows a 32k context within a few rounds; the server then
// answers HTTP 400 and the trajectory would end.
#include <string>
#include <vector>

#include "agent/llm/provider.hpp"

namespace ptxbench {

// A rough token count: bytes / 3, rounded up, over every message's content.
// BPE vocabularies average 3-4 bytes per token on PTX and English, so this
// overestimates a little: the budget is a guard, not an exact count.
int estimate_tokens(const std::vector<chat_message>& messages);

// Fits [system, task, (assistant, feedback)...] into `max_tokens`. Always keeps
// the system prompt, the task, and the last attempt with its feedback. First
// the ```ptx blocks of older attempts are replaced by an elision marker, oldest
// first; then older (attempt, feedback) pairs are dropped, oldest first, until
// the estimate fits or only the last pair is left.
std::vector<chat_message> fit_context(std::vector<chat_message> messages, int max_tokens);

// True when a failed call's cause reads as the server refusing a prompt longer
// than its context (vLLM, SGLang, llama.cpp, Ollama, OpenAI, Anthropic wordings).
bool is_context_length_error(const completion_outcome& outcome);

}  // namespace ptxbench
