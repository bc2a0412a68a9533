// The viewer in a real headless browser (Debian's `chromium`): the pages render,
// the embedded script runs, and a <script> inside a model's reply does not.
// Without chromium the test fails under CI=true and is skipped (exit 77) otherwise.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "agent/data/report.hpp"
#include "agent/viewer/app.hpp"
#include "profile_fixture.hpp"
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
std::string dump_dom(const std::string& chromium, const std::string& url, const std::filesystem::path& profile,
                     const std::string& window = "1280,900") {
  std::string command = "timeout 120 '" + chromium +
                        "' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
                        "--window-size=" + window + " --user-data-dir='" + profile.string() +
                        "' --virtual-time-budget=5000 --dump-dom '" + url + "' 2>/dev/null";
  std::string out;
  if (std::FILE* pipe = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    pclose(pipe);
  }
  return out;
}

std::string need_chromium() {
  auto chromium = find_chromium();
  if (!chromium) {
    const char* ci = std::getenv("CI");
    std::string why = "chromium not found (install Debian's `chromium` package, or set PTXBENCH_CHROMIUM)";
    if (ci && std::string(ci) == "true") FAIL(why);
    std::printf("SKIPPED: %s\n", why.c_str());
    std::exit(77);
  }
  return *chromium;
}

// The value of data-NAME="..." on the dumped <body>, or "" when absent.
std::string body_attribute(const std::string& dom, const std::string& name) {
  auto at = dom.find("data-" + name + "=\"");
  if (at == std::string::npos) return "";
  at += name.size() + 7;
  return dom.substr(at, dom.find('"', at) - at);
}

// Measures the laid-out report in the browser and writes the figures onto
// <body>: the page's width, and pairs of chart labels whose boxes overlap
// (axis ticks apart: they sit beside the plot by design).
const char* k_measure_script = R"(<script>
const out = document.body;
out.dataset.scrollWidth = document.documentElement.scrollWidth;
let overlaps = [], labels = 0;
for (const svg of document.querySelectorAll('svg.chart')) {
  const boxes = [...svg.querySelectorAll('text:not(.tick)')].map(t => [t.textContent, t.getBBox()]);
  labels += boxes.length;
  for (let i = 0; i < boxes.length; ++i) for (let j = i + 1; j < boxes.length; ++j) {
    const a = boxes[i][1], b = boxes[j][1];
    if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
      overlaps.push(boxes[i][0] + ' / ' + boxes[j][0]);
  }
}
out.dataset.labels = labels;
// Table boxes whose content is wider than the box: cut off, read only by scrolling.
const cut = [...document.querySelectorAll('div.wide')].filter(d => d.scrollWidth > d.clientWidth + 1);
out.dataset.cutTables = cut.length;
out.dataset.cutWidths = cut.map(d => d.scrollWidth + '>' + d.clientWidth).join(' ');
out.dataset.overlaps = overlaps.length;
out.dataset.overlapList = overlaps.join(' | ');
out.dataset.charts = ['pass_at_k', 'fast_p'].filter(c => document.querySelector('svg[data-chart=' + c + ']')).join(',')
  + ',' + document.querySelectorAll('svg.histogram').length + ' histograms';
</script>)";

// Measures the profiled trajectory page's PTX listing as laid out and writes
// the figures onto <body>: the hot rows, whether each is painted apart from a
// plain row and shows its share badge, their titles; then follows the first
// top-line link and records the row it targets and whether it is in view.
const char* k_hot_lines_script = R"(<script>
const out = document.body;
const hot = [...document.querySelectorAll('table.ptx-listing tr.hot')];
const plain = document.querySelector('table.ptx-listing tr:not(.hot)');
const bg = e => getComputedStyle(e).backgroundColor;
out.dataset.hotRows = hot.map(r => r.id).join(',');
out.dataset.painted = hot.filter(r => bg(r) !== bg(plain)).length;
out.dataset.badges = hot.map(r => r.querySelector('.hot-share')).filter(b => b && b.offsetWidth > 0 &&
  b.offsetHeight > 0 && bg(b) !== bg(plain) && getComputedStyle(b).visibility === 'visible')
  .map(b => b.textContent).join(',');
out.dataset.titles = hot.map(r => r.title).join(' | ');
const link = document.querySelector('ol.hot-lines a');
out.dataset.link = link ? link.getAttribute('href') : '';
if (link) link.click();
setTimeout(() => {
  const t = document.querySelector(':target');
  out.dataset.target = t ? t.id : '';
  if (t) {
    const box = t.getBoundingClientRect();
    out.dataset.targetInView = box.top >= 0 && box.bottom <= window.innerHeight && window.scrollY > 0 ? 'yes' : 'no';
  }
}, 200);
</script>)";

}  // namespace

TEST_CASE("browser: the report has its three plots and fits 1400 px and no chart labels overlap") {
  auto chromium = need_chromium();
  auto f = testing::make_fixture_db("report-browser");
  experiment_row e;
  e.name = "a-second-experiment-with-a-long-name";
  e.model = "organisation/a-very-long-model-name-with-quantisation-suffix-awq-int4-g128-and-more";
  int64_t eid = f.store->create_experiment(e);
  const double speedups[] = {0.31, 0.47, 0.52, 0.66, 0.93, 1.05, 1.18, 1.42, 1.77, 2.4};
  for (int i = 0; i < 10; ++i) {
    testing::add_trajectory(*f.store, eid, "attention_fwd_bf16_wgmma_causal", "attention_fwd", i,
                            "S" + std::to_string(i), {{"compile"}, {"passed", speedups[i]}}, e.model);
  }
  auto experiments = data::load_experiments(*f.store, {});
  auto groups = data::compute_metrics(experiments);
  for (auto& g : groups) g.speedup_threshold = 0.9;
  std::vector<experiment_row> rows;
  for (const auto& x : experiments) rows.push_back(x.experiment);
  auto html = data::render_report_html(groups, rows, "runs/report.db");
  html.insert(html.rfind("</body>"), k_measure_script);
  auto page = f.dir / "report.html";
  std::ofstream(page) << html;
  auto profile = testing::fresh_dir("chromium-report");
  auto dom = dump_dom(chromium, "file://" + page.string(), profile, "1400,1000");
  INFO("body: " << dom.substr(dom.find("<body"), 600));
  REQUIRE_FALSE(body_attribute(dom, "scroll-width").empty());
  CHECK(std::stoi(body_attribute(dom, "scroll-width")) <= 1400);
  CHECK(std::stoi(body_attribute(dom, "labels")) > 50);
  CHECK(body_attribute(dom, "overlaps") == "0");
  CHECK(body_attribute(dom, "charts") == "pass_at_k,fast_p,3 histograms");
  std::filesystem::remove_all(profile);
}

TEST_CASE("browser: pages render and the viewer script runs but a script in a reply does not") {
  auto chromium = std::optional<std::string>(need_chromium());
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

TEST_CASE("browser: no report table is cut off at 1400 px with long names and several tasks and levels") {
  auto chromium = need_chromium();
  auto f = testing::make_fixture_db("report-tables");
  experiment_row e;
  e.name = "a-second-experiment-with-a-long-name-for-the-sweep-of-every-variant";
  e.model = "organisation/a-very-long-model-name-with-quantisation-suffix-awq-int4-g128-and-more";
  int64_t eid = f.store->create_experiment(e);
  const char* tasks[] = {"attention_fwd_bf16_wgmma_causal_gqa_8to1_varlen_hd128", "gemm_fp8_e4m3_nn_bias_gelu_grouped_moe_64"};
  for (int i = 0; i < 6; ++i) {
    testing::add_trajectory(*f.store, eid, tasks[i % 2], i % 2 ? "gemm" : "attention_fwd", i / 2,
                            "S" + std::to_string(i), {{"compile"}, {"passed", 0.5 + i}}, e.model);
  }
  auto experiments = data::load_experiments(*f.store, {});
  auto groups = data::compute_metrics(experiments);
  data::task_catalogue levels;
  levels[tasks[0]] = {"attention_fwd", 3, {}, {}};
  levels[tasks[1]] = {"gemm", 4, {}, {}};
  data::annotate_tasks(groups, levels);
  std::vector<experiment_row> rows;
  for (const auto& x : experiments) rows.push_back(x.experiment);
  auto html = data::render_report_html(groups, rows, "runs/report.db");
  html.insert(html.rfind("</body>"), k_measure_script);
  auto page = f.dir / "report.html";
  std::ofstream(page) << html;
  auto profile = testing::fresh_dir("chromium-tables");
  auto dom = dump_dom(chromium, "file://" + page.string(), profile, "1400,1000");
  INFO("body: " << dom.substr(dom.find("<body"), 600));
  REQUIRE_FALSE(body_attribute(dom, "cut-tables").empty());
  CHECK(std::stoi(body_attribute(dom, "scroll-width")) <= 1400);
  CHECK_MESSAGE(body_attribute(dom, "cut-tables") == "0", body_attribute(dom, "cut-widths"));
  std::filesystem::remove_all(profile);
}

TEST_CASE("browser: the viewer marks the hot PTX lines of a profile and a script in a profile does not run") {
  auto chromium = need_chromium();
  testing::served_db served("viewer-browser-profile");
  const int64_t tid = testing::add_profiled_trajectory(*served.db().store, served.db().experiment_id);
  const std::string path = "/trajectories/" + std::to_string(tid);
  auto profile = testing::fresh_dir("chromium-profile-hot");

  // Served over HTTP with the viewer's own script and CSP.
  auto dom = dump_dom(chromium, served.url(path), profile);
  INFO("dumped DOM of the profiled trajectory: " << dom.substr(0, 3000));
  REQUIRE(dom.find("<table class=\"ptx-listing\">") != std::string::npos);
  size_t hot = 0;
  for (size_t at = dom.find("class=\"hot\""); at != std::string::npos; at = dom.find("class=\"hot\"", at + 1)) ++hot;
  CHECK(hot == 3);
  CHECK(dom.find("<title>" + testing::profiled_task + " #") != std::string::npos);
  CHECK(dom.find("pwned</title>") == std::string::npos);
  CHECK(dom.find("&lt;script&gt;document.title='pwned'&lt;/script&gt;") != std::string::npos);
  CHECK(dom.find(">changes only</button>") != std::string::npos);  // viewer.js ran on this page

  // As laid out with the viewer's stylesheet: the page inlined into a file with a measuring script.
  viewer::viewer_app app(*served.db().store);
  auto html = app.get(path).body;
  const std::string link = "<link rel=\"stylesheet\" href=\"/assets/style.css\">";
  REQUIRE(html.find(link) != std::string::npos);
  html.replace(html.find(link), link.size(), "<style>" + app.get("/assets/style.css").body + "</style>");
  html.insert(html.rfind("</body>"), k_hot_lines_script);
  auto file = served.db().dir / "profiled.html";
  std::ofstream(file) << html;
  auto laid_out = dump_dom(chromium, "file://" + file.string(), profile, "1280,500");
  INFO("body: " << laid_out.substr(laid_out.find("<body"), 1200));
  REQUIRE_FALSE(body_attribute(laid_out, "hot-rows").empty());
  CHECK(body_attribute(laid_out, "hot-rows") == "round-1-L8,round-1-L9,round-1-L10");
  CHECK(body_attribute(laid_out, "painted") == "3");
  CHECK(body_attribute(laid_out, "badges") == "31%,5%,42%");
  CHECK(body_attribute(laid_out, "titles").find("line 10: 42% of samples, mostly math pipe busy") != std::string::npos);
  CHECK(body_attribute(laid_out, "link") == "#round-1-L10");
  CHECK(body_attribute(laid_out, "target") == "round-1-L10");
  CHECK(body_attribute(laid_out, "target-in-view") == "yes");
  std::filesystem::remove_all(profile);
}
