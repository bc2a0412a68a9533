// The options of the commands that read and write run data: export, report,
// replay, merge and mutate.
#include <limits>

#include "agent/cli/option_rows.hpp"

namespace ptxbench::cli {

namespace {
const std::vector<std::string> k_stages = {"format",       "compile",     "runtime", "correctness",
                                           "instructions", "performance", "passed"};
constexpr int64_t k_int_max = std::numeric_limits<int>::max();
}  // namespace

std::vector<option> data_option_rows() {
  const value_type text = value_type::text;
  return {
      make_option("kind", "KIND", "the records written").one_of({"correction", "sft", "preference", "prompts"})
          .by_default("correction"),
      make_option("out", "PATH",
                  "where to write. export: '-' for stdout (default), a FILE.jsonl, or a DIR (DIR/data/train.jsonl "
                  "and a dataset card DIR/README.md for datasets.load_dataset(DIR)); replay: the database written "
                  "(created if missing); merge: the merged database (may hold an earlier merge)")
          .short_name('o'),
      make_option("format", "FORMAT",
                  "correction and sft records: prompt_completion (default; the failed attempt is never in the "
                  "completion) or messages")
          .one_of({"prompt_completion", "messages"}),
      make_option("export.history", "HISTORY",
                  "correction prompts: last (the failed attempt and its feedback, default) or full (every earlier "
                  "attempt and its feedback)")
          .one_of({"last", "full"}),
      make_option("reasoning", "MODE",
                  "the trained replies' reasoning: drop (default), field (reasoning_content) or inline "
                  "(<think> block)")
          .one_of({"drop", "field", "inline"}),
      make_option("experiment", "NAME,...", "only these experiments (default all)").list_of(text),
      make_option("task", "ID,...", "only these task ids").list_of(text),
      make_option("family", "NAME,...", "only these task families").list_of(text),
      make_option("level", "N,...", "only tasks of these levels (0: not given)")
          .list_of(value_type::integer)
          .integer(0, 100),
      make_option("export.model", "NAME,...", "only replies of these models").list_of(text),
      make_option("failing-stage", "STAGE", "only failed attempts (rejected answers) that failed at this stage")
          .one_of(k_stages),
      make_option("min-fix-stage", "STAGE", "the fix (answer, chosen) reached at least this stage").one_of(k_stages),
      make_option("min-speedup", "X", "the fix has a measured speedup of at least X").number(0, 1e9),
      make_option("balance", "", "cap every coverage cell at the smallest non-empty cell").boolean(),
      make_option("per-cell", "N", "balance with this cap per cell instead").integer(0, k_int_max),
      make_option("balance-by", "AXIS,...",
                  "the axes of a coverage cell besides the failing stage (default family)")
          .list_of(value_type::choice)
          .one_of({"family", "level", "variant", "task"}),
      make_option("prompts-dir", "DIR", "folder of prompt templates").by_default("prompts").also("prompts"),
      make_option("suite", "NAME",
                  "the tasks of this suite: core (one task per family and level) or full (run: default the config's, "
                  "else every task; tasks list; export --kind prompts: the tasks whose prompts are written)")
          .config("suite"),
      make_option("tokenizer", "FILE",
                  "the model's tokenizer.json: count each record's tokens (byte-level BPE tokenizers: GPT-2, "
                  "Llama 3, Qwen 2 and the like)"),
      make_option("max-tokens", "N",
                  "leave out records whose trained sequence is longer than N tokens (needs --tokenizer)")
          .integer(1, k_int_max),
      make_option("over-max", "ACTION",
                  "with --max-tokens: drop (default) or flag (keep them with provenance.over_max_tokens)")
          .one_of({"drop", "flag"}),
      make_option("license", "ID",
                  "the dataset card's license field (default unknown: model outputs fall under the model's terms)"),
      make_option("keep-duplicates", "",
                  "keep records whose candidates are near-duplicates of an earlier record's (default: dropped)")
          .boolean(),
      make_option("report.json", "FILE",
                  "also write the figures per experiment x model x task as JSON to FILE ('-': stdout, instead of "
                  "the table)"),
      make_option("html", "FILE", "also write a self-contained HTML report with plots to FILE"),
      make_option("replay.experiment", "NAME", "the experiment to replay"),
      make_option("jobs", "N", "evaluations in flight at once").integer(1, 1024).by_default("4"),
      make_option("worker", "FILE", "the ptxbench-worker executable (default: next to this binary)"),
      make_option("inputs", "SHARD.db", "shard databases to merge").list_of(text).as_positional(),
      make_option("all", "", "every task that has a verified solution").boolean(),
      make_option("per-solution", "N", "mutants judged per solution").integer(1, 100000).by_default("10"),
      make_option("seed", "S", "seed of the operators' choices")
          .integer(0, std::numeric_limits<int64_t>::max())
          .by_default("1"),
      make_option("operators", "NAME,...", "only these operators (agent/mutate/README.md)").list_of(text),
      make_option("solutions", "DIR", "folder of checked-in solutions (default <tasks-dir>/solutions)"),
      make_option("generated-solutions", "DIR",
                  "folder of generated solutions (scripts/gen_solutions.sh; default <tasks-dir>/../build/solutions)"),
      make_option("rationale", "", "ask the teacher of --config for the reasoning from each kept mutant to its fix")
          .boolean(),
  };
}

}  // namespace ptxbench::cli
