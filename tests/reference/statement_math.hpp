#pragma once
// The mathematics of the task statements (tasks/families/*.json), written
// from the statements alone, in double, as plainly as possible: the formula
// the host reference is checked against. Small sizes only.
#include <map>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench::testing {

using values = std::map<std::string, std::vector<double>>;

// Every output of task `t` at size `s` from `in` (every input, index inputs included).
values statement_outputs(const task& t, const size_point& s, const values& in);

// O and LSE of the forward pass that attention backward's statement names.
values statement_attention_forward(const task& t, const size_point& s, const values& in);

}  // namespace ptxbench::testing
