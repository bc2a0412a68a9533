#pragma once
// Assembling one evaluation result: the worker's stages merged into the
// supervisor's, the instruction stage decided, the verdict and headline set.
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/pool/hw_cross_check.hpp"
#include "evaluator/pool/instruction_proof.hpp"
#include "evaluator/protocol/protocol.hpp"

namespace ptxbench {

// "ptxas error at line 42: ..." from the first error diagnostic (or the log).
std::string compile_headline(const compile_report& report);

// Takes runtime, correctness and performance (and their reports) from the worker.
void merge_worker_result(const protocol::worker_result& w, evaluation_result& r);

// Decides the instructions stage from the static report in r.instructions and
// the counts of every counted size (empty when none were taken: `missing` says
// why). `counting_failure`: the candidate broke a counting pass, and again on a
// fresh worker, while its checked runs were clean: the stage fails with it.
// `hw`: the hardware cross-check; when asked, a stage the counts pass holds
// only if the uninstrumented run agrees (else failed: "the kernel behaves
// differently when counted"), and is unverified when the machine could not run it.
void decide_instructions(evaluation_result& r, const sass_listing& sass, const task& t,
                         const std::vector<size_counts>& counted, const std::string& missing,
                         const std::string& counting_failure = "", const hw_outcome& hw = {});

// Sets passed, verdict and headline. The first failed stage is the verdict,
// whatever evaluator error (status error) another stage holds: an error never
// hides a failure of the candidate. With none failed, the first stage with
// status error ("evaluator error at <stage>: ..."); with neither, the first
// not passed (not run, unverified).
void finish_verdict(evaluation_result& r);

}  // namespace ptxbench
