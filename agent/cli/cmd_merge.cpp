// ptxbench merge: unite the shard databases of a sharded run (`run --shard i/n`,
// one database per shard, e.g. a Slurm array job) into one database.
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "agent/cli/commands.hpp"
#include "agent/store/merge.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {
namespace {

void print_summary(const merge_result& r, const std::filesystem::path& out) {
  std::printf("merged %d input database%s into %s\n\n", r.inputs, r.inputs == 1 ? "" : "s", out.c_str());
  std::printf("%-28s %-6s %-11s %12s %10s %8s %6s %12s %9s %9s\n", "experiment", "inputs", "status", "trajectories",
              "completed", "skipped", "turns", "evaluations", "failures", "siblings");
  for (const auto& e : r.experiments)
    std::printf("%-28s %-6d %-11s %12d %10d %8d %6d %12d %9d %9d%s\n", e.name.c_str(), e.databases, e.status.c_str(),
                e.trajectories_copied, e.trajectories_completed, e.trajectories_skipped, e.turns, e.evaluations,
                e.llm_failures, e.branch_replies, e.created ? "" : "  (existed)");
  int skipped = 0;
  int completed = 0;
  for (const auto& e : r.experiments) {
    skipped += e.trajectories_skipped;
    completed += e.trajectories_completed;
  }
  std::printf("%-28s %-6d %-11s %12d %10d %8d %6d %12d %9d %9d\n", "total", r.inputs, "",
              r.total_trajectories() - completed, completed, skipped, r.total_turns(), r.total_evaluations(),
              r.total_llm_failures(), r.total_branch_replies());
  std::printf("\ntrajectories: new ones copied; completed: pending in the output and continued; "
              "skipped: already present and identical; siblings: replies of branched rounds (run --branch).\n"
              "counts are rows written.\n");
  for (const auto& w : r.warnings) std::fprintf(stderr, "ptxbench: warning: %s\n", w.c_str());
}

int cmd_merge(const option_values& values) {
  const std::string out_path = values.text("out");
  std::vector<std::filesystem::path> inputs;
  for (const auto& p : values.list("inputs")) {
    // Checked before opening --out, so a typo does not leave an empty output behind.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) throw input_error("input '" + p + "': no such file");
    inputs.emplace_back(p);
  }
  merge_options options;
  options.experiments = values.list("experiment");
  std::error_code ec;
  const bool out_existed = std::filesystem::exists(out_path, ec);
  merge_result result;
  try {
    auto out = run_store::open(out_path);
    result = merge_run_databases(inputs, *out, options);
  } catch (...) {
    // A merge that failed (an input that is no database, overlapping shards)
    // must not leave a new, empty output database behind. An output that
    // existed keeps what it had: the merge writes in one transaction.
    if (!out_existed)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(out_path + suffix, ec);
    throw;
  }
  print_summary(result, out_path);
  return exit_code::ok;
}

}  // namespace

const command_spec& merge_command() {
  static const command_spec spec{
      "merge", cmd_merge, "merge shard databases (run --shard i/n) into one",
      "Merge the shard databases of a sharded run into one.\n  ptxbench merge --out runs/all.db runs/shard-*.db\n"
      "Experiments of one name become one; a trajectory found in two inputs must be identical there (shards must "
      "not overlap). Merging again adds nothing.",
      {"out", "experiment", "inputs"},
      {"out", "inputs"}};
  return spec;
}

}  // namespace ptxbench::cli
