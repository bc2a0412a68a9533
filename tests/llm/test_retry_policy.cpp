// Retry-After parsing and the backoff schedule.
#include <doctest/doctest.h>

#include "agent/http/retry_after.hpp"
#include "agent/llm/retry_policy.hpp"

using namespace ptxbench::llm_detail;

TEST_CASE("retry policy: Retry-After as delay seconds") {
  CHECK(ptxbench::http::parse_retry_after("2", 0) == 2.0);
  CHECK(ptxbench::http::parse_retry_after(" 0.5 \r\n", 0) == 0.5);
  CHECK_FALSE(ptxbench::http::parse_retry_after("", 0).has_value());
  CHECK_FALSE(ptxbench::http::parse_retry_after("soon", 0).has_value());
  CHECK_FALSE(ptxbench::http::parse_retry_after("3s", 0).has_value());
}

TEST_CASE("retry policy: Retry-After as an HTTP-date is relative to now") {
  // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 seconds after the epoch.
  const std::time_t date = 1445412480;
  auto later = ptxbench::http::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", date - 7);
  REQUIRE(later.has_value());
  CHECK(*later == doctest::Approx(7.0));
  CHECK(ptxbench::http::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", date + 100) == 0.0);
}

TEST_CASE("retry policy: backoff doubles - is capped - and jitter stays within [half - full]") {
  CHECK(backoff_delay_s(0, 1.0, 60.0, 0.999999) == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(backoff_delay_s(1, 1.0, 60.0, 0.999999) == doctest::Approx(2.0).epsilon(1e-5));
  CHECK(backoff_delay_s(3, 1.0, 60.0, 0.999999) == doctest::Approx(8.0).epsilon(1e-5));
  CHECK(backoff_delay_s(10, 1.0, 60.0, 0.999999) == doctest::Approx(60.0).epsilon(1e-5));
  CHECK(backoff_delay_s(100, 1.0, 60.0, 0.0) == doctest::Approx(30.0));
  for (int i = 0; i < 100; ++i) {
    double r = unit_random();
    REQUIRE(r >= 0.0);
    REQUIRE(r < 1.0);
  }
}

TEST_CASE("retry policy: which statuses are retried") {
  for (long s : {408L, 429L, 500L, 502L, 503L, 529L}) CHECK(is_retryable_status(s));
  for (long s : {400L, 401L, 403L, 404L, 422L}) CHECK_FALSE(is_retryable_status(s));
}
