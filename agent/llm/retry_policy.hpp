#pragma once
// When to retry a failed LLM call and how long to wait. Internal to agent/llm;
// the transport reads Retry-After itself (agent/http/retry_after.hpp).
namespace ptxbench::llm_detail {

// 408, 429 and 5xx are transient; any other 4xx will fail the same way again.
bool is_retryable_status(long http_status);

// The wait before retry number `retry_index` (0 for the first retry):
// initial * 2^retry_index capped at max_s, scaled by a jitter in [0.5, 1.0]
// from `unit_random` in [0, 1) so that callers that failed together spread out.
double backoff_delay_s(int retry_index, double initial_s, double max_s, double unit_random);

// A uniform random number in [0, 1), thread-safe.
double unit_random();

}  // namespace ptxbench::llm_detail
