// ptxbench report: per model x task metrics as a terminal table and, with
// --html, a self-contained HTML page with plots.
#include <cstdio>
#include <fstream>

#include "agent/cli/commands.hpp"
#include "agent/cli/output_file.hpp"
#include "agent/data/report.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {

namespace {

int cmd_report(const option_values& values) {
  const std::string db = values.text("db");
  if (!std::filesystem::exists(db)) throw input_error("no run database at " + db);
  const std::vector<std::string> names = values.list("experiment");
  auto store = run_store::open(db, true);
  auto experiments = data::load_experiments(*store, names);
  auto groups = data::compute_metrics(experiments);
  std::string warning;
  data::annotate_tasks(groups, data::load_catalogue(values.given_text("tasks-dir"), &warning));
  if (!warning.empty()) std::fprintf(stderr, "ptxbench: %s\n", warning.c_str());
  // Experiments side by side by LLM calls per trajectory (branch 1 against branch N).
  auto curves = data::compute_calls_curves(experiments);
  std::vector<experiment_row> rows;
  for (const auto& e : experiments) rows.push_back(e.experiment);
  const auto json_out = values.text_if("report.json");
  if (json_out && *json_out == "-") {
    std::printf("%s\n", data::render_report_json(groups, rows, db, curves).dump(2).c_str());
  } else {
    std::fputs(data::format_report_text(groups, curves).c_str(), stdout);
  }
  if (json_out && *json_out != "-") {
    write_file_atomically(*json_out, data::render_report_json(groups, rows, db, curves).dump(2) + "\n");
    std::printf("wrote %s\n", json_out->c_str());
  }
  if (auto html = values.text_if("html")) {
    write_file_atomically(*html, data::render_report_html(groups, rows, db, curves));
    std::fprintf(json_out && *json_out == "-" ? stderr : stdout, "wrote %s\n", html->c_str());
  }
  return exit_code::ok;
}

}  // namespace

const command_spec& report_command() {
  static const command_spec spec{
      "report", cmd_report, "per model x task metrics, terminal table and HTML with plots",
      "Report compile %, correct %, instructions %, fast_p, pass@k and speedups per experiment x model across its "
      "tasks (overall, per family, per level) and per task, how each repair round moves them, and the experiments "
      "side by side by LLM calls per trajectory (branch 1 against branch N at equal calls).",
      {"db", "experiment", "tasks-dir", "html", "report.json"},
      {"db"}};
  return spec;
}

}  // namespace ptxbench::cli
