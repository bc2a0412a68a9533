// ptxbench report: per model x task metrics as a terminal table and, with
// --html, a self-contained HTML page with plots.
#include <cstdio>
#include <fstream>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/data/report.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::cli {

int cmd_report(int argc, char** argv) {
  cxxopts::Options opts(argv[0],
                        "Report compile %, correct %, instructions %, fast_p, pass@k and speedups per experiment x "
                        "model across its tasks (overall, per family, per level) and per task, how each repair round "
                        "moves them, and the experiments side by side by LLM calls per "
                        "trajectory (branch 1 against branch N at equal calls).");
  opts.add_options()
    ("db", "run database", cxxopts::value<std::string>())
    ("experiment", "only these experiments (repeatable, comma-separated; default all)",
     cxxopts::value<std::vector<std::string>>())
    ("tasks-dir", "task files that give each task's level and variant (default ./tasks when present)",
     cxxopts::value<std::string>())
    ("html", "also write a self-contained HTML report with plots to this file", cxxopts::value<std::string>())
    ("json", "also write the figures per experiment x model x task as JSON to this file ('-': stdout, "
             "instead of the table)", cxxopts::value<std::string>());
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  auto db = option_or_env(args, "db");
  if (!db) throw input_error("--db is required");
  if (!std::filesystem::exists(*db)) throw input_error("no run database at " + *db);
  std::vector<std::string> names;
  if (args.count("experiment")) names = args["experiment"].as<std::vector<std::string>>();
  else if (auto e = option_or_env(args, "experiment")) names = {*e};
  auto store = run_store::open(*db, true);
  auto experiments = data::load_experiments(*store, names);
  auto groups = data::compute_metrics(experiments);
  std::string warning;
  data::annotate_tasks(groups, data::load_catalogue(option_or_env(args, "tasks-dir"), &warning));
  if (!warning.empty()) std::fprintf(stderr, "ptxbench: %s\n", warning.c_str());
  // Experiments side by side by LLM calls per trajectory (branch 1 against branch N).
  auto curves = data::compute_calls_curves(experiments);
  std::vector<experiment_row> rows;
  for (const auto& e : experiments) rows.push_back(e.experiment);
  auto json_out = option_or_env(args, "json");
  if (json_out && *json_out == "-") {
    std::printf("%s\n", data::render_report_json(groups, rows, *db, curves).dump(2).c_str());
  } else {
    std::fputs(data::format_report_text(groups, curves).c_str(), stdout);
  }
  if (json_out && *json_out != "-") {
    std::ofstream file(*json_out, std::ios::binary);
    if (!file) throw std::runtime_error("cannot write " + *json_out);
    file << data::render_report_json(groups, rows, *db, curves).dump(2) << '\n';
    if (!file.flush()) throw std::runtime_error("error writing " + *json_out);
    std::printf("wrote %s\n", json_out->c_str());
  }
  if (auto html = option_or_env(args, "html")) {
    std::ofstream file(*html, std::ios::binary);
    if (!file) throw std::runtime_error("cannot write " + *html);
    file << data::render_report_html(groups, rows, *db, curves);
    if (!file.flush()) throw std::runtime_error("error writing " + *html);
    std::fprintf(json_out && *json_out == "-" ? stderr : stdout, "wrote %s\n", html->c_str());
  }
  return exit_code::ok;
}

}  // namespace ptxbench::cli
