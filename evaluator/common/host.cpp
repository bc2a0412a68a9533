#include "evaluator/common/host.hpp"

#include <unistd.h>

namespace ptxbench {

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "unknown";
  return buf;
}

}  // namespace ptxbench
