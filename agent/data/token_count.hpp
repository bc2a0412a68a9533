#pragma once
// Token counts for export records (`export --tokenizer FILE --max-tokens N`):
// PTX replies run to tens of kilobytes, and a trainer that truncates or drops
// rows past its max_length does so silently, so the export measures them.
//
// The count is exact for the tokenizers implemented (a HuggingFace
// tokenizer.json): a byte-level BPE model (GPT-2, Llama 3, Qwen 2/2.5/3 and
// the like) with no normalizer or NFC, and the pre-tokenizer ByteLevel
// (GPT-2's split) or Split on the Llama 3 or Qwen 2 pattern followed by
// ByteLevel without its own split. Added tokens that occur in the text count
// as one token each. Anything else (WordPiece, Unigram, SentencePiece-style
// Metaspace BPE, another split pattern) is refused with the component named,
// never approximated. The count is of the text alone: the special tokens a
// chat template puts around each message are not included.
// tests/data/test_token_count.cpp checks the splitting and merging against
// counts made by the `tokenizers` library (scripts/check_token_count.py).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace ptxbench::data {

class token_counter {
 public:
  virtual ~token_counter() = default;
  // The number of tokens `text` encodes to (no special tokens added).
  virtual int64_t count(std::string_view text) = 0;
  // E.g. "byte-level BPE, Split (Llama 3 pattern), 128256 tokens, from tok.json".
  virtual std::string description() const = 0;
  // Texts counted so far that NFC normalisation might have changed (combining
  // marks), counted as they are; 0 for a tokenizer without NFC.
  virtual int64_t unnormalised_texts() const { return 0; }
};

// Loads a tokenizer.json. Throws input_error naming the file and the JSON path
// of a component this counter does not implement.
std::unique_ptr<token_counter> load_tokenizer(const std::filesystem::path& file);

}  // namespace ptxbench::data
