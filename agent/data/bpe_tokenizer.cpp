// A byte-level BPE token counter read from a HuggingFace tokenizer.json
// (token_count.hpp says which tokenizers; pretokenize.hpp the splits). The
// merge loop follows the `tokenizers` library's: the pair of lowest merge
// rank merges first, the leftmost among equals.
#include <algorithm>
#include <array>
#include <queue>
#include <unordered_map>
#include <vector>

#include "agent/data/pretokenize.hpp"
#include "agent/data/token_count.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {
namespace {

using json = nlohmann::json;

// GPT-2's reversible map from bytes to printable code points, as UTF-8.
std::array<std::string, 256> byte_symbols() {
  std::array<std::string, 256> out;
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int cp = printable ? b : 256 + extra++;
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    out[b] = s;
  }
  return out;
}

struct added_token {
  std::string content;
  bool lstrip = false, rstrip = false;
};

struct merge_entry {
  int rank;
  int new_id;
};

class bpe_counter final : public token_counter {
 public:
  std::string m_description;
  std::unordered_map<std::string, int> m_vocab;
  std::unordered_map<uint64_t, merge_entry> m_merges;
  std::array<int, 256> m_byte_ids{};  // -1: not in the vocabulary (an unknown symbol)
  std::array<std::string, 256> m_byte_text;
  std::vector<added_token> m_added;  // longest first
  bool m_ignore_merges = false, m_fuse_unk = false, m_nfc = false, m_has_unk = false;
  bool m_prefix_space = false, m_prefix_per_piece = false;
  split_pattern m_pattern = split_pattern::gpt2;
  std::unordered_map<std::string, int64_t> m_cache;
  int64_t m_not_nfc = 0;  // texts counted without normalisation (see count)

  int64_t count(std::string_view text) override {
    int64_t n = 0;
    size_t start = 0;
    for (size_t i = 0; i < text.size();) {
      const added_token* hit = added_at(text, i);
      if (!hit) {
        ++i;
        continue;
      }
      size_t left = i, right = i + hit->content.size();
      if (hit->lstrip)
        while (left > start && is_ascii_space(text[left - 1])) --left;
      if (hit->rstrip)
        while (right < text.size() && is_ascii_space(text[right])) ++right;
      n += count_segment(text.substr(start, left - start)) + 1;
      start = i = right;
    }
    return n + count_segment(text.substr(start));
  }

  std::string description() const override { return m_description; }
  int64_t unnormalised_texts() const override { return m_not_nfc; }

 private:
  static bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  const added_token* added_at(std::string_view text, size_t i) const {
    for (const auto& a : m_added)
      if (text.compare(i, a.content.size(), a.content) == 0) return &a;
    return nullptr;
  }

  int64_t count_segment(std::string_view segment) {
    if (segment.empty()) return 0;
    // NFC leaves text that passes its quick check unchanged; other text (with
    // combining marks, which PTX and prompts rarely hold) is counted as it is.
    if (m_nfc && !nfc_quick_check(segment)) ++m_not_nfc;
    std::string prefixed;
    if (m_prefix_space && !m_prefix_per_piece && segment.front() != ' ') {
      prefixed = " " + std::string(segment);
      segment = prefixed;
    }
    std::vector<std::string_view> pieces;
    split_pieces(segment, m_pattern, pieces);
    int64_t n = 0;
    for (auto piece : pieces) {
      if (m_prefix_space && m_prefix_per_piece && piece.front() != ' ') {
        n += count_word(" " + std::string(piece));
      } else {
        n += count_word(std::string(piece));
      }
    }
    return n;
  }

  int64_t count_word(const std::string& word) {
    if (auto it = m_cache.find(word); it != m_cache.end()) return it->second;
    const int64_t n = merge_word(word);
    if (m_cache.size() < 1000000) m_cache.emplace(word, n);
    return n;
  }

  int64_t merge_word(const std::string& word) const {
    if (m_ignore_merges) {
      std::string mapped;
      for (char c : word) mapped += m_byte_text[static_cast<unsigned char>(c)];
      if (m_vocab.count(mapped)) return 1;
    }
    struct sym {
      int id, prev, next;
      bool alive;
    };
    std::vector<sym> s(word.size());
    for (size_t i = 0; i < word.size(); ++i)
      s[i] = {m_byte_ids[static_cast<unsigned char>(word[i])], static_cast<int>(i) - 1,
              i + 1 < word.size() ? static_cast<int>(i + 1) : -1, true};
    struct candidate {
      int rank, pos, new_id;
      bool operator>(const candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<candidate, std::vector<candidate>, std::greater<candidate>> queue;
    auto push = [&](int pos) {
      if (pos < 0 || s[pos].next < 0) return;
      const int a = s[pos].id, b = s[s[pos].next].id;
      if (a < 0 || b < 0) return;
      auto it = m_merges.find(pair_key(a, b));
      if (it != m_merges.end()) queue.push({it->second.rank, pos, it->second.new_id});
    };
    for (size_t i = 0; i + 1 < s.size(); ++i) push(static_cast<int>(i));
    while (!queue.empty()) {
      const auto top = queue.top();
      queue.pop();
      auto& left = s[top.pos];
      if (!left.alive || left.next < 0) continue;
      auto& right = s[left.next];
      auto it = left.id >= 0 && right.id >= 0 ? m_merges.find(pair_key(left.id, right.id)) : m_merges.end();
      if (it == m_merges.end() || it->second.new_id != top.new_id) continue;  // stale
      left.id = top.new_id;
      right.alive = false;
      left.next = right.next;
      if (left.next >= 0) s[left.next].prev = top.pos;
      push(left.prev);
      push(top.pos);
    }
    int64_t n = 0;
    bool previous_unknown = false;
    for (const auto& x : s) {
      if (!x.alive) continue;
      // A symbol outside the vocabulary is the unknown token (fused with the
      // one before under fuse_unk), or dropped when there is none.
      const bool unknown = x.id < 0;
      if (!unknown || (m_has_unk && !(previous_unknown && m_fuse_unk))) ++n;
      previous_unknown = unknown;
    }
    return n;
  }

 public:
  static uint64_t pair_key(int a, int b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
};

[[noreturn]] void unsupported(const std::filesystem::path& file, const std::string& at, const std::string& what) {
  throw input_error(file.string() + ": " + at + ": " + what +
                    "; the token counter implements byte-level BPE tokenizers only (agent/data/token_count.hpp)");
}

std::string type_of(const json& j) { return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : ""; }

bool flag(const json& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>(); }

bool empty_string_or_null(const json& j, const char* key) {
  return !j.contains(key) || j[key].is_null() || (j[key].is_string() && j[key].get<std::string>().empty());
}

split_pattern known_pattern(const std::filesystem::path& file, const json& split) {
  const json& pattern = split.value("pattern", json());
  if (!pattern.is_object() || !pattern.contains("Regex") || !pattern["Regex"].is_string())
    unsupported(file, "$.pre_tokenizer...pattern", "a Split pattern that is not a Regex");
  const std::string text = pattern["Regex"].get<std::string>();
  for (auto p : {split_pattern::gpt2, split_pattern::llama3, split_pattern::qwen2})
    if (text == pattern_text(p)) return p;
  unsupported(file, "$.pre_tokenizer...pattern.Regex", "the split pattern " + text + " is not one of GPT-2's, Llama 3's or Qwen 2's");
}

void read_normalizer(const std::filesystem::path& file, const json& n, bpe_counter& c) {
  if (n.is_null()) return;
  if (type_of(n) == "NFC") {
    c.m_nfc = true;
    return;
  }
  unsupported(file, "$.normalizer", "normalizer " + (type_of(n).empty() ? n.dump() : type_of(n)));
}

void read_pre_tokenizer(const std::filesystem::path& file, const json& p, bpe_counter& c) {
  const std::string type = type_of(p);
  if (type == "ByteLevel") {
    if (p.contains("use_regex") && !flag(p, "use_regex")) unsupported(file, "$.pre_tokenizer", "ByteLevel without its split");
    c.m_pattern = split_pattern::gpt2;
    c.m_prefix_space = flag(p, "add_prefix_space");
    c.m_description = "ByteLevel split";
    return;
  }
  const json& list = p.value("pretokenizers", json());
  if (type != "Sequence" || !list.is_array() || list.size() != 2 || type_of(list[0]) != "Split" ||
      type_of(list[1]) != "ByteLevel")
    unsupported(file, "$.pre_tokenizer", "pre-tokenizer " + (type.empty() ? p.dump().substr(0, 80) : type) +
                                             " (implemented: ByteLevel, or Sequence[Split, ByteLevel])");
  const json& split = list[0];
  if (split.value("behavior", "") != "Isolated" || flag(split, "invert"))
    unsupported(file, "$.pre_tokenizer.pretokenizers[0]", "a Split that is not Isolated or is inverted");
  if (flag(list[1], "use_regex")) unsupported(file, "$.pre_tokenizer.pretokenizers[1]", "ByteLevel splitting again after Split");
  c.m_pattern = known_pattern(file, split);
  c.m_prefix_space = flag(list[1], "add_prefix_space");
  c.m_prefix_per_piece = true;  // a Sequence applies ByteLevel to each piece of the Split
  c.m_description = std::string("Split (") + (c.m_pattern == split_pattern::gpt2 ? "GPT-2" : c.m_pattern == split_pattern::llama3 ? "Llama 3" : "Qwen 2") + " pattern)";
}

void read_model(const std::filesystem::path& file, const json& m, bpe_counter& c) {
  if (type_of(m) != "BPE") unsupported(file, "$.model.type", "model " + type_of(m));
  if (m.contains("dropout") && !m["dropout"].is_null() && !(m["dropout"].is_number() && m["dropout"].get<double>() == 0.0))
    unsupported(file, "$.model.dropout", "BPE dropout (counts would vary from call to call)");
  if (!empty_string_or_null(m, "continuing_subword_prefix") || !empty_string_or_null(m, "end_of_word_suffix"))
    unsupported(file, "$.model", "a continuing-subword prefix or end-of-word suffix");
  c.m_ignore_merges = flag(m, "ignore_merges");
  c.m_fuse_unk = flag(m, "fuse_unk");
  c.m_has_unk = m.contains("unk_token") && m["unk_token"].is_string();
  const json& vocab = m.value("vocab", json());
  if (!vocab.is_object()) throw input_error(file.string() + ": $.model.vocab is not an object");
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer()) throw input_error(file.string() + ": $.model.vocab[\"" + token + "\"] is not an integer");
    c.m_vocab.emplace(token, id.get<int>());
  }
  const json& merges = m.value("merges", json());
  if (!merges.is_array()) throw input_error(file.string() + ": $.model.merges is not a list");
  int rank = 0;
  for (const auto& entry : merges) {
    std::string a, b;
    if (entry.is_string()) {  // "a b"
      const auto& s = entry.get_ref<const std::string&>();
      const auto space = s.find(' ');
      if (space == std::string::npos) throw input_error(file.string() + ": $.model.merges[" + std::to_string(rank) + "] has no space");
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {  // ["a", "b"]
      a = entry[0].get<std::string>();
      b = entry[1].get<std::string>();
    } else {
      throw input_error(file.string() + ": $.model.merges[" + std::to_string(rank) + "] is not \"a b\" or [a, b]");
    }
    auto ia = c.m_vocab.find(a), ib = c.m_vocab.find(b), merged = c.m_vocab.find(a + b);
    if (ia != c.m_vocab.end() && ib != c.m_vocab.end() && merged != c.m_vocab.end())
      c.m_merges.emplace(bpe_counter::pair_key(ia->second, ib->second), merge_entry{rank, merged->second});
    ++rank;
  }
  c.m_byte_text = byte_symbols();
  for (int b = 0; b < 256; ++b) {
    auto it = c.m_vocab.find(c.m_byte_text[b]);
    c.m_byte_ids[b] = it == c.m_vocab.end() ? -1 : it->second;
  }
}

}  // namespace

std::unique_ptr<token_counter> load_tokenizer(const std::filesystem::path& file) {
  const json doc = [&] {
    try {
      return json::parse(read_text_file(file, "(tokenizer)", 256u << 20));
    } catch (const json::exception& e) {
      throw input_error(file.string() + ": invalid JSON: " + e.what());
    }
  }();
  if (!doc.is_object()) throw input_error(file.string() + ": not a tokenizer.json (not an object)");
  auto c = std::make_unique<bpe_counter>();
  read_normalizer(file, doc.value("normalizer", json()), *c);
  read_pre_tokenizer(file, doc.value("pre_tokenizer", json()), *c);
  read_model(file, doc.value("model", json()), *c);
  const json& added = doc.value("added_tokens", json::array());
  for (const auto& a : added.is_array() ? added : json::array()) {
    if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || a["content"].get<std::string>().empty()) continue;
    c->m_added.push_back({a["content"].get<std::string>(), flag(a, "lstrip"), flag(a, "rstrip")});
  }
  std::stable_sort(c->m_added.begin(), c->m_added.end(),
                   [](const added_token& x, const added_token& y) { return x.content.size() > y.content.size(); });
  c->m_description = "byte-level BPE, " + c->m_description + (c->m_nfc ? ", NFC" : "") + ", " +
                     std::to_string(c->m_vocab.size()) + " tokens, from " + file.filename().string();
  return c;
}

}  // namespace ptxbench::data
