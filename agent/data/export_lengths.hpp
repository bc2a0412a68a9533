#pragma once
// Lengths of export records (export.hpp): measuring them, the --max-tokens
// limit, and their statistics for the terminal and the dataset card.
#include "agent/data/export.hpp"

namespace ptxbench::data {

// Throws input_error when --max-tokens is given without a tokenizer, or is < 1.
void check_length_options(const export_options& options);
// measure_lengths, then drops (or, with flag_over_max, flags in provenance)
// the records longer than max_tokens, counting them in `result`.
void apply_length_limit(export_result& result, const export_options& options);

}  // namespace ptxbench::data
