#pragma once
// The rows of the option table, by the commands that mostly use them (private
// to option_table.cpp and its test).
#include <vector>

#include "agent/cli/option_table.hpp"

namespace ptxbench::cli {

std::vector<option> experiment_option_rows();  // run's, most of them backed by the experiment config
std::vector<option> data_option_rows();        // export, report, replay, merge, mutate
std::vector<option> tool_option_rows();        // eval, tasks, serve, evald

}  // namespace ptxbench::cli
