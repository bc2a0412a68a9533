#include "evaluator/api/candidate.hpp"

#include <cctype>
#include <vector>

namespace ptxbench {

namespace {

struct fenced_block {
  std::string language;
  std::string body;
};

// Splits markdown fenced blocks (``` or ~~~, any length >= 3). An unterminated
// last block runs to the end of the reply (models cut off by max_tokens).
std::vector<fenced_block> fenced_blocks(const std::string& text, bool* unterminated) {
  std::vector<fenced_block> blocks;
  *unterminated = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    size_t indent = line.find_first_not_of(" \t");
    if (indent != std::string::npos && (line.compare(indent, 3, "```") == 0 || line.compare(indent, 3, "~~~") == 0)) {
      char fence_char = line[indent];
      size_t fence_len = line.find_first_not_of(fence_char, indent) - indent;
      if (line.find_first_not_of(fence_char, indent) == std::string::npos) fence_len = line.size() - indent;
      std::string info = line.substr(indent + fence_len);
      size_t a = info.find_first_not_of(" \t\r"), b = info.find_first_of(" \t\r{", a);
      fenced_block blk;
      blk.language = a == std::string::npos ? "" : info.substr(a, b == std::string::npos ? b : b - a);
      for (auto& c : blk.language) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      // Built once per block: rebuilding it per line made a long fence line
      // followed by many lines quadratic.
      const std::string fence(fence_len, fence_char);
      const std::string fence_or_space = std::string(1, fence_char) + " \t\r";
      size_t body_start = eol == std::string::npos ? text.size() : eol + 1;
      size_t p = body_start;
      bool closed = false;
      while (p < text.size()) {
        size_t e = text.find('\n', p);
        std::string l = text.substr(p, e == std::string::npos ? std::string::npos : e - p);
        size_t li = l.find_first_not_of(" \t");
        if (li != std::string::npos && l.compare(li, fence_len, fence) == 0 &&
            l.find_first_not_of(fence_or_space, li) == std::string::npos) {
          blk.body = text.substr(body_start, p - body_start);
          pos = e == std::string::npos ? text.size() : e + 1;
          closed = true;
          break;
        }
        p = e == std::string::npos ? text.size() : e + 1;
      }
      if (!closed) {
        blk.body = text.substr(body_start);
        pos = text.size();
        *unterminated = true;
      }
      blocks.push_back(blk);
      continue;
    }
    pos = eol == std::string::npos ? text.size() : eol + 1;
  }
  return blocks;
}

}  // namespace

extracted_candidate extract_candidate(const std::string& reply) {
  extracted_candidate c;
  bool unterminated = false;
  auto blocks = fenced_blocks(reply, &unterminated);
  const fenced_block* ptx = nullptr;
  const fenced_block* json = nullptr;
  for (const auto& b : blocks) {
    if (b.language == "ptx") ptx = &b;
    else if (b.language == "json") json = &b;
  }
  if (ptx) c.ptx = ptx->body;
  if (json) c.manifest_text = json->body;
  std::string problem;
  if (!ptx) problem = "no ```ptx block in the reply";
  if (!json) problem += std::string(problem.empty() ? "" : "; ") + "no ```json launch manifest block in the reply";
  if (ptx && ptx->body.find(".entry") == std::string::npos)
    problem += std::string(problem.empty() ? "" : "; ") + "the ```ptx block has no .entry kernel";
  if (unterminated && !problem.empty())
    problem += " (the reply ends inside an unterminated ``` block: was it cut off by the token limit?)";
  c.problem = problem;
  return c;
}

}  // namespace ptxbench
