#pragma once
// Extracting a candidate from a model's reply: the last ```ptx block and the
// last ```json block count (docs/design.md). A reply without them fails `format`.
#include <optional>
#include <string>

namespace ptxbench {

struct extracted_candidate {
  std::string ptx;
  std::string manifest_text;
  std::string problem;  // non-empty when the reply is malformed: what was missing
};

extracted_candidate extract_candidate(const std::string& reply);

}  // namespace ptxbench
