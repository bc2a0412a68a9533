#pragma once
// Size and scalar expressions of tasks and manifests: "cdiv(M,128)", "M*N*4",
// "2*M*N*K", "1/sqrt(D)". Grammar: + - * / % with the usual precedence, unary
// minus, parentheses, integer and decimal literals, names bound by the caller,
// and the functions cdiv(a,b), min(a,b), max(a,b), sqrt(a), rsqrt(a), and the index
// inputs' totals grouped_rows(G,M), varlen_total(B,S), varlen_sumsq(B,S),
// varlen_causal_pairs(B,S) (index_inputs.hpp).
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace ptxbench {

struct expression_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using name_values = std::map<std::string, int64_t>;

// Bounds on what a task or a model's manifest may write.
inline constexpr size_t k_max_expression_chars = 4096;
inline constexpr int k_max_expression_depth = 200;  // about 100 levels of parentheses

// Evaluates in 64-bit integers: '/' truncates, '%' is the remainder.
// Throws expression_error naming the expression and the problem (unknown name,
// division by zero, overflow (INT64_MIN / -1 included), nesting past k_max_expression_depth, syntax error with its column, real-only function).
int64_t eval_int(const std::string& expr, const name_values& names);

// Evaluates in double precision: '/' is real division.
double eval_real(const std::string& expr, const name_values& names);

// Checks syntax and that every name is in `allowed`; throws expression_error.
void check_expression(const std::string& expr, const std::map<std::string, int64_t>& allowed);

}  // namespace ptxbench
