#pragma once
// The pre-tokenizer splits of byte-level BPE tokenizers, written out as
// scanners over code points rather than run through a regex engine (the
// patterns use \p{L} and \p{N}, which std::regex lacks). Each reproduces its
// pattern's find-all with leftmost-first alternation, as Oniguruma (which the
// `tokenizers` library uses) matches it.
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::data {

enum class split_pattern {
  gpt2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  llama3,  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  qwen2,   // the same with \p{N} (one digit) in place of \p{N}{1,3}
};

// The pattern text as tokenizer.json writes it.
const char* pattern_text(split_pattern p);

// Appends the pieces of UTF-8 `text` (views into it) in order; together they
// cover the text. A byte that is not valid UTF-8 counts as one symbol of
// neither class (letters, numbers, white space).
void split_pieces(std::string_view text, split_pattern p, std::vector<std::string_view>& out);

// True when `text` is certainly in NFC already (no code point that NFC could
// change, reorder or compose), so NFC normalisation leaves it as it is.
bool nfc_quick_check(std::string_view text);

}  // namespace ptxbench::data
