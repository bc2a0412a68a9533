// The replay provider answers from recorded replies by turn key.
#include <doctest/doctest.h>

#include "agent/llm/provider.hpp"

using namespace ptxbench;

TEST_CASE("replay: recorded replies are returned - missing ones are a failure value") {
  auto p = make_replay_provider(
      [](const turn_key& k) -> std::optional<completion> {
        if (k.task_id != "gemm" || k.sample != 2 || k.round != 1) return std::nullopt;
        completion c;
        c.text = "recorded";
        c.reasoning = "recorded thought";
        c.completion_tokens = 9;
        return c;
      },
      "replay runs/a.db experiment=baseline");
  CHECK(p->describe() == "replay runs/a.db experiment=baseline");

  completion_request hit;
  hit.key = {"gemm", 2, 1};
  auto out = p->complete(hit);
  REQUIRE(out.ok);
  CHECK(out.result.text == "recorded");
  CHECK(out.result.reasoning == "recorded thought");
  CHECK(out.result.completion_tokens == 9);

  completion_request miss;
  miss.key = {"gemm", 2, 3};
  auto none = p->complete(miss);
  CHECK_FALSE(none.ok);
  CHECK(none.error == "no recorded reply for task gemm sample 2 round 3");
}
