// Near-duplicate candidates: the normalised PTX, its fingerprint, and the
// duplicate_of flag the store writes.
#include <doctest/doctest.h>

#include "agent/store/merge.hpp"
#include "agent/store/ptx_fingerprint.hpp"
#include "store_test_util.hpp"

namespace ptxbench {
namespace {

const char* k_ptx = R"(.version 8.5
.target sm_90a
// the kernel
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b32 %r<8>;
  mov.u32 %r3, %tid.x;   /* thread */
  add.s32 %r5, %r3, 1;
$L__BB0_2:
  @%p1 bra $L__BB0_2;
}
)";

TEST_CASE("normalised PTX ignores comments whitespace and register numbering") {
  const std::string renamed = R"(.version 8.5
.target sm_90a
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<8>;
	mov.u32 	%r1, %tid.x;
	add.s32 	%r2,   %r1, 1;
$L__BB0_7:
	@%p4 bra 	$L__BB0_7;
}
)";
  CHECK(normalise_ptx(k_ptx) == normalise_ptx(renamed));
  CHECK(candidate_fingerprint(k_ptx, "{\"launches\": []}") == candidate_fingerprint(renamed, "{ \"launches\":[] }"));
  // Special registers and declarations stay as written.
  CHECK(normalise_ptx(k_ptx).find("%tid.x") != std::string::npos);
  CHECK(normalise_ptx(k_ptx).find("%r<8>") != std::string::npos);
}

TEST_CASE("a changed instruction or manifest changes the fingerprint") {
  std::string other = k_ptx;
  other.replace(other.find("add.s32"), 7, "sub.s32");
  CHECK(candidate_fingerprint(k_ptx, "{}") != candidate_fingerprint(other, "{}"));
  // Two registers merged into one is a different program.
  std::string merged = k_ptx;
  merged.replace(merged.find("%r5"), 3, "%r3");
  CHECK(normalise_ptx(k_ptx) != normalise_ptx(merged));
  CHECK(candidate_fingerprint(k_ptx, "{\"a\": 1}") != candidate_fingerprint(k_ptx, "{\"a\": 2}"));
  CHECK(candidate_fingerprint("", "{}").empty());
}

TEST_CASE("the store flags a near-duplicate of an earlier candidate of the same task") {
  store_test::temp_folder dir;
  auto store = run_store::open(dir / "runs.db");
  const int64_t exp = store->create_experiment(store_test::sample_experiment("e"));
  auto add = [&](const std::string& task, int sample, const std::string& ptx) {
    turn_row t;
    t.trajectory_id = store->ensure_trajectory(exp, task, "gemm", sample);
    t.round = 0;
    candidate_row c;
    c.ptx = ptx;
    c.manifest = "{}";
    store->record_turn(t, c);
    return store->turns(t.trajectory_id).at(0).candidate.value();
  };
  std::string spaced = k_ptx;
  spaced.replace(spaced.find("%r5"), 3, "%r6");  // renumbered only
  auto first = add("t1", 0, k_ptx);
  auto second = add("t1", 1, spaced);
  auto other_task = add("t2", 0, k_ptx);
  auto empty = add("t1", 2, "");
  CHECK_FALSE(first.duplicate_of);
  CHECK(first.normalised_hash.size() == 16);
  REQUIRE(second.duplicate_of);
  CHECK(*second.duplicate_of == first.id);
  CHECK_FALSE(other_task.duplicate_of);  // duplicates are per task
  CHECK(empty.normalised_hash.empty());
  CHECK_FALSE(empty.duplicate_of);
}


// A model's manifest is hostile: 1,000,000 levels of nesting (1 MB) once
// overflowed the stack in the fingerprint's parse and dump, before the turn
// was stored, so `run`, every `--resume`, `merge` and `replay` crashed on it.
TEST_CASE("a manifest nested 1000000 levels deep is fingerprinted as text - stored and merged") {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  const std::string fp = candidate_fingerprint(k_ptx, deep);
  CHECK(fp.size() == 16);
  CHECK(fp == candidate_fingerprint(k_ptx, " " + deep + "\n"));  // as text: whitespace runs collapsed
  CHECK(fp != candidate_fingerprint(k_ptx, "[]"));
  CHECK(candidate_fingerprint(k_ptx, "{\"a\": " + std::string(100000, '{')).size() == 16);

  store_test::temp_folder dir;
  {
    auto store = run_store::open(dir / "shard.db");
    const int64_t exp = store->create_experiment(store_test::sample_experiment("deep"));
    turn_row t;
    t.trajectory_id = store->ensure_trajectory(exp, "t1", "gemm", 0);
    t.round = 0;
    t.reply = "```json\n" + deep + "\n```";
    candidate_row c;
    c.ptx = k_ptx;
    c.manifest = deep;
    store->record_turn(t, c);
    CHECK(store->turns(t.trajectory_id).at(0).candidate->normalised_hash == fp);
  }
  auto merged = run_store::open(dir / "all.db");
  merge_run_databases({dir / "shard.db"}, *merged);
  CHECK(store_test::sql_count(dir / "all.db", "SELECT count(*) FROM candidates") == 1);
  CHECK(store_test::sql_text(dir / "all.db", "SELECT normalised_hash FROM candidates") == fp);
}

}  // namespace
}  // namespace ptxbench
