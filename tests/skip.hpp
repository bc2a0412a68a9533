#pragma once
// A reported skip: a case that cannot do (all or part of) its work on this
// machine because a tool is missing says so, and is never counted as a pass.
// skip() prints the reason; when every case that ran passed, the test
// executable then exits 77, which ctest (SKIP_RETURN_CODE 77) lists as
// "Skipped" with the reason in its output. Under CI=true a skip fails the case
// instead: CI installs every tool, so a missing one there is a broken set-up.
#include <string>

namespace ptxbench::test {

void skip(const std::string& why);
int skip_count();  // skips recorded by this process

// True when `path` (a tool's resolved path, empty when it was not found) is
// empty, after a skip naming `tool` and what is not tested without it.
bool tool_missing(const std::string& tool, const std::string& path, const std::string& untested);

}  // namespace ptxbench::test
