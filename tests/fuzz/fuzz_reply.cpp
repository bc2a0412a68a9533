// Extraction of the ```ptx and ```json blocks from a model's reply.
#include <cstddef>
#include <cstdint>
#include <string>

#include "evaluator/api/candidate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string reply(reinterpret_cast<const char*>(data), size);
  const ptxbench::extracted_candidate c = ptxbench::extract_candidate(reply);
  if (c.ptx.size() > reply.size() || c.manifest_text.size() > reply.size()) __builtin_trap();
  return 0;
}
