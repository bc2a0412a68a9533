#pragma once
// Shared set-up for the provider tests: fast retries so faults cost
// milliseconds, and a short two-message conversation.
#include <chrono>

#include "agent/llm/provider.hpp"
#include "fake_llm_server.hpp"

namespace ptxbench::test {

inline provider_config fast_config(const fake_llm_server& server,
                                   provider_kind kind = provider_kind::openai) {
  provider_config c;
  c.kind = kind;
  c.base_url = kind == provider_kind::anthropic ? server.origin() : server.base_url();
  c.model = "test-model";
  c.timeout_s = 5;
  c.max_retries = 3;
  c.backoff_initial_s = 0.01;
  c.backoff_max_s = 0.05;
  return c;
}

inline completion_request gemm_request() {
  completion_request r;
  r.messages = {{"system", "You write PTX for sm_90a."}, {"user", "Write a bf16 GEMM."}};
  r.key = {"gemm_bf16_mma", 0, 1};
  return r;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ptxbench::test
