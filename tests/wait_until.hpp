#pragma once
// Waiting on a condition in a test, instead of sleeping for a time that is
// "surely enough": poll the condition itself until it holds or a deadline
// passes. On a loaded machine a fixed sleep is too short (a flaky failure),
// on an idle one too long (a slow suite); a poll is neither.
#include <chrono>
#include <thread>

namespace ptxbench::test {

// Calls `done` every `every` until it returns true (then true) or `limit`
// has passed (then false, after one last call). The limit is a bound on a
// failure, never a duration the test relies on.
template <class Condition>
bool wait_until(Condition&& done, std::chrono::milliseconds limit = std::chrono::seconds(20),
                std::chrono::milliseconds every = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(every);
  }
  return true;
}

}  // namespace ptxbench::test
