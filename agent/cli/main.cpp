// ptxbench: measure and improve how well language models write
// architecture-specific PTX. The subcommands are a table; each owns its options.
#include <cstdio>
#include <cstring>
#include <string>

#include <cxxopts.hpp>
#include <stdexcept>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/store/merge.hpp"
#include "agent/store/store.hpp"
#include "evaluator/api/json_path.hpp"
#include "ptxbench/version.hpp"

namespace {

struct command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const command commands[] = {
    {"run", ptxbench::cli::cmd_run, "run (or --resume) a generate -> evaluate -> repair experiment"},
    {"eval", ptxbench::cli::cmd_eval, "judge one PTX module + launch manifest for one task"},
    {"tasks", ptxbench::cli::cmd_tasks, "list, show or check the tasks"},
    {"export", ptxbench::cli::cmd_export, "write training data (correction, sft, preference) as JSONL"},
    {"replay", ptxbench::cli::cmd_replay, "re-evaluate logged candidates and show changed verdicts"},
    {"report", ptxbench::cli::cmd_report, "per model x task metrics, terminal table and HTML with plots"},
    {"serve", ptxbench::cli::cmd_serve, "read-only web viewer over a run database"},
    {"merge", ptxbench::cli::cmd_merge, "merge shard databases (run --shard i/n) into one"},
    {"evald", ptxbench::cli::cmd_evald, "evaluation service over HTTP (for RL trainers and remote runs)"},
    {"mutate", ptxbench::cli::cmd_mutate, "correction data: break verified solutions, judge, keep the aimed verdicts"},
};

void usage(std::FILE* out) {
  std::fprintf(out, "ptxbench %s (evaluator %s)\n\nusage: ptxbench <command> [options]   (ptxbench <command> --help)\n\n",
               ptxbench::project_version, ptxbench::evaluator_version);
  for (const auto& c : commands) std::fprintf(out, "  %-8s %s\n", c.name, c.summary);
  std::fprintf(out, "\nexit codes: 0 ok, 1 the job ran and found failures, 2 usage or input error, "
                    "3 infrastructure error, 130 interrupted\n");
}

// The one place where a command's exceptions become exit codes: bad usage or
// input (the message names the file and JSON path) is 2, anything else that
// ended the command (SQLite, HTTP transport, CUDA toolkit) is 3.
int run_guarded(const command& c, int argc, char** argv) {
  using namespace ptxbench::cli;
  try {
    return c.run(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    print_error(e.what());
    return exit_code::usage;
  } catch (const ptxbench::input_error& e) {
    print_error(e.what());
    return exit_code::usage;
  } catch (const ptxbench::not_a_run_database& e) {
    print_error(e.what());
    return exit_code::usage;
  } catch (const ptxbench::merge_error& e) {
    print_error(e.what());
    return exit_code::usage;
  } catch (const std::invalid_argument& e) {
    print_error(std::string("bad number in an option: ") + e.what());
    return exit_code::usage;
  } catch (const std::exception& e) {
    print_error(e.what());
    return exit_code::infrastructure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("ptxbench %s (evaluator %s)\n", ptxbench::project_version, ptxbench::evaluator_version);
    return 0;
  }
  for (const auto& c : commands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    std::string name = std::string("ptxbench ") + c.name;
    argv[1] = name.data();
    return run_guarded(c, argc - 1, argv + 1);
  }
  std::fprintf(stderr, "ptxbench: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
