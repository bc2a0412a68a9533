// Near-duplicate records: dropped from exports unless keep_duplicates, and
// every record names its source.
#include <doctest/doctest.h>

#include "agent/data/export.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;

TEST_CASE("a correction whose attempt and fix repeat an earlier one is dropped unless kept") {
  auto f = testing::make_fixture_db("dedup");
  // Sample 2 writes trajectory A's candidates again (same PTX and manifest).
  testing::add_trajectory(*f.store, f.experiment_id, "gemm_bf16_wgmma", "gemm", 2, "A",
                          {{"compile"}, {"correctness"}, {"passed", 1.2}});
  export_options o;
  o.kind = export_kind::correction;
  auto dropped = build_export(*f.store, o);
  CHECK(dropped.records.size() == 4);
  CHECK(dropped.duplicates_dropped == 2);
  o.keep_duplicates = true;
  auto kept = build_export(*f.store, o);
  CHECK(kept.records.size() == 6);
  CHECK(kept.duplicates_dropped == 0);
  for (const auto& r : kept.records) {
    CHECK(r.body["provenance"]["source"] == "model");
    CHECK(r.body["provenance"]["operator"].is_null());
  }
  // sft: the repeated passing answer is one example.
  o.kind = export_kind::sft;
  o.keep_duplicates = false;
  auto sft = build_export(*f.store, o);
  CHECK(sft.duplicates_dropped == 1);
}
