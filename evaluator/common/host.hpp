#pragma once
#include <string>

namespace ptxbench {

// This machine's host name, "unknown" when it has none.
std::string host_name();

}  // namespace ptxbench
