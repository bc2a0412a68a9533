// The viewer in a real headless browser (Debian's `chromium`): the pages render,
// the embedded script runs, and a <script> inside a model's reply does not.
// Without chromium the test fails under CI=true and is skipped (exit 77) otherwise.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "served_db.hpp"

using namespace ptxbench;

namespace {

std::optional<std::string> find_chromium() {
  if (const char* env = std::getenv("PTXBENCH_CHROMIUM"); env && *env) return std::string(env);
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      auto candidate = std::filesystem::path(dirs.substr(start, end - start)) / name;
      if (!candidate.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
      start = end + 1;
    }
  }
  return std::nullopt;
}

// The DOM after the page loaded and its scripts ran, as chromium serializes it.
std::string dump_dom(const std::string& chromium, const std::string& url, const std::filesystem::path& profile) {
  std::string command = "timeout 120 '" + chromium +
                        "' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
                        "--user-data-dir='" + profile.string() + "' --virtual-time-budget=5000 --dump-dom '" + url +
                        "' 2>/dev/null";
  std::string out;
  if (std::FILE* pipe = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    pclose(pipe);
  }
  return out;
}

}  // namespace

TEST_CASE("browser: pages render and the viewer script runs but a script in a reply does not") {
  auto chromium = find_chromium();
  if (!chromium) {
    const char* ci = std::getenv("CI");
    std::string why = "chromium not found (install Debian's `chromium` package, or set PTXBENCH_CHROMIUM)";
    if (ci && std::string(ci) == "true") FAIL(why);
    std::printf("SKIPPED: %s\n", why.c_str());
    std::exit(77);
  }
  testing::served_db served("viewer-browser");
  auto profile = testing::fresh_dir("chromium-profile");

  auto home = dump_dom(*chromium, served.url("/"), profile);
  INFO("dumped DOM of /: " << home.substr(0, 2000));
  REQUIRE(home.find("<table id=\"experiments\">") != std::string::npos);
  CHECK(home.find(">exp1</a>") != std::string::npos);

  auto page = dump_dom(*chromium, served.url("/trajectories/" + std::to_string(served.db().trajectories["C"])), profile);
  INFO("dumped DOM of the trajectory: " << page.substr(0, 4000));
  REQUIRE(page.find("<title>") != std::string::npos);
  CHECK(page.find("<title>attention_fwd_bf16_wgmma #") != std::string::npos);
  CHECK(page.find("pwned</title>") == std::string::npos);
  CHECK(page.find("data-pwned=\"1\"") == std::string::npos);
  CHECK(page.find("<img") == std::string::npos);
  // The reply is shown as text: the serialized DOM escapes it again.
  CHECK(page.find("&lt;script&gt;document.title='pwned'&lt;/script&gt;") != std::string::npos);

  auto diff_page =
      dump_dom(*chromium, served.url("/trajectories/" + std::to_string(served.db().trajectories["A"])), profile);
  INFO("dumped DOM of the diff page: " << diff_page.substr(0, 2000));
  CHECK(diff_page.find("<table class=\"diff\">") != std::string::npos);
  // Added by /assets/viewer.js: the embedded script was served and ran.
  CHECK(diff_page.find(">changes only</button>") != std::string::npos);
  std::filesystem::remove_all(profile);
}
