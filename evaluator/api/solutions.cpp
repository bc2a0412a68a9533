#include "evaluator/api/solutions.hpp"

#include <cstdlib>

namespace ptxbench {
namespace {

bool complete(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "kernel.ptx", ec) &&
         std::filesystem::is_regular_file(dir / "manifest.json", ec);
}

}  // namespace

solution_roots default_solution_roots(const std::filesystem::path& tasks_dir) {
  solution_roots r;
  r.checked_in = tasks_dir / "solutions";
  const char* generated = std::getenv("PTXBENCH_GENERATED_SOLUTIONS");
  r.generated = generated && *generated ? std::filesystem::path(generated) : tasks_dir / ".." / "build" / "solutions";
  return r;
}

std::optional<std::filesystem::path> solution_dir(const std::string& id, const solution_roots& roots) {
  if (id.empty() || id.find('/') != std::string::npos || id.find("..") != std::string::npos) return std::nullopt;
  if (complete(roots.checked_in / id)) return roots.checked_in / id;
  if (!roots.generated.empty() && complete(roots.generated / id)) return roots.generated / id;
  return std::nullopt;
}

}  // namespace ptxbench
