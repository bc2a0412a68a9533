#pragma once
// run's experiment config: the config file with the command line and
// PTXBENCH_* laid over it, and on --resume the stored config.
#include <string>
#include <vector>

#include "agent/cli/option_reader.hpp"
#include "agent/loop/experiment_config.hpp"
#include "agent/store/store.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench::cli {

// Reads the config file at `path`, checks the values it gives for options of
// the table by the table's rules (an empty "tasks" list, a negative
// "endpoint_latency_ms"... are input errors naming the file and key), puts
// each option given on the command line or in the environment at its config
// key, and parses the result. Throws input_error.
experiment_config read_run_config(const option_values& values, const std::string& path);

// The stored config of experiment `exp` (run --resume): it wins for everything
// that shapes the data. An option given (command line or environment) with a
// value other than the stored one is refused with an input_error naming the
// stored value; those the table marks may_change_on_resume (name, db,
// concurrency, the endpoints' addresses) are taken from `current`.
experiment_config resume_config(const experiment_config& current, const experiment_row& exp,
                                const option_values& values);

// A new experiment whose config-file name is taken runs as name-2, name-3, ...
// so the default command works again; a name given explicitly must be free.
void name_new_experiment(experiment_config& cfg, run_store& store, bool name_given, bool quiet);

// The experiment's tasks: those it names (every task when it names none).
// Throws input_error for an unknown task id.
std::vector<task> select_tasks(const experiment_config& cfg);

}  // namespace ptxbench::cli
