#pragma once
// Near-duplicate detection for candidates: a fingerprint of the PTX with what
// does not change the program taken out (comments, whitespace, the numbering
// of registers and labels) and of the manifest as parsed JSON. The store
// writes it with every candidate and flags a candidate whose fingerprint an
// earlier candidate of the same task has (candidates.duplicate_of).
#include <string>

namespace ptxbench {

// Comments removed, whitespace runs collapsed to one space, and every
// register (%r12, %rd3, %f7, %p1 ...) and label ($L__BB0_5) renumbered per
// prefix in order of first appearance. Special registers (%tid.x, %ctaid.y)
// and parameter names are kept.
std::string normalise_ptx(const std::string& ptx);

// 16 hex digits over normalise_ptx(ptx) and the manifest (compact JSON when
// it parses within the nesting bound of evaluator/common/json_path.hpp, else
// whitespace-collapsed text); "" when the PTX is empty. Never throws for any
// manifest text.
std::string candidate_fingerprint(const std::string& ptx, const std::string& manifest);

}  // namespace ptxbench
