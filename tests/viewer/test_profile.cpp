// The viewer's profile of an evaluation (tests/viewer/profile_fixture.hpp):
// the kernel table, the roofline, the plain reasons, the hot lines marked in
// the PTX listing, escaping, and nothing for an evaluation without a profile.
#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "agent/viewer/app.hpp"
#include "agent/viewer/pages.hpp"
#include "profile_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::viewer;

namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The section of `page` from round `round`'s heading to the next round's.
std::string round_of(const std::string& page, int round) {
  auto at = page.find("<section class=\"round\" id=\"round-" + std::to_string(round) + "\">");
  REQUIRE(at != std::string::npos);
  return page.substr(at, page.find("</section>", at) - at);
}

struct profiled_db {
  testing::fixture_db f = testing::make_fixture_db("viewer-profile");
  int64_t trajectory = testing::add_profiled_trajectory(*f.store, f.experiment_id);
  viewer_app app{*f.store};
  std::string page() {
    auto r = app.get("/trajectories/" + std::to_string(trajectory));
    REQUIRE(r.status == 200);
    return r.body;
  }
};

}  // namespace

TEST_CASE("viewer profile: the kernel table puts the candidate's figures beside the library's") {
  profiled_db db;
  const std::string round = round_of(db.page(), 1);
  CHECK(occurrences(round, "<div class=\"profile\" id=\"round-1-profile\">") == 1);
  CHECK(round.find("<h3>profile at M=4096 N=4096 K=4096</h3>") != std::string::npos);
  // The candidate's column first, though the library's range was stored first.
  CHECK(round.find("<tr><th>kernel</th><th class=\"candidate\">yours: launch 0 (&lt;script&gt;document.title=&#39;"
                   "pwned&#39;&lt;/script&gt;)</th><th class=\"baseline\">cuBLASLt</th></tr>") != std::string::npos);
  // The figures as format_profile writes them: -1 and a stored NaN (null) as "-".
  for (const char* row : {
           "<tr><th>time (us)</th><td class=\"num candidate\">812.4</td><td class=\"num baseline\">640.0</td></tr>",
           "<tr><th>SM busy</th><td class=\"num candidate\">72%</td><td class=\"num baseline\">93%</td></tr>",
           "<tr><th>tensor pipe</th><td class=\"num candidate\">65%</td><td class=\"num baseline\">-</td></tr>",
           "<tr><th>occupancy</th><td class=\"num candidate\">12%</td><td class=\"num baseline\">25%</td></tr>",
           "<tr><th>smem bank conflicts</th><td class=\"num candidate\">1024</td><td class=\"num baseline\">0</td></tr>",
           "<tr><th>regs/thread</th><td class=\"num candidate\">168</td><td class=\"num baseline\">-</td></tr>",
           "<tr><th>smem/CTA</th><td class=\"num candidate\">197632</td><td class=\"num baseline\">-</td></tr>"}) {
    CAPTURE(row);
    CHECK(round.find(row) != std::string::npos);
  }
  CHECK(round.find("arithmetic intensity 1374 FLOP/byte (compute-bound on this GPU); the candidate reaches 169 "
                   "TFLOP/s of 989 peak (17%) and 123 GB/s of the minimum traffic against 3350 GB/s of bandwidth; "
                   "measured DRAM traffic 148 GB/s.") != std::string::npos);
  CHECK(round.find("10000 PC samples, 2% on no line of the PTX") != std::string::npos);
  CHECK(round.find("profile-missing") == std::string::npos);
}

TEST_CASE("viewer profile: the listing marks exactly the hot lines and the top lines link to them") {
  profiled_db db;
  const std::string round = round_of(db.page(), 1);
  // Every line of the PTX has its anchor; the hot ones, and only they, the class.
  const std::regex row("<tr id=\"round-1-L([0-9]+)\"( class=\"hot\")?");
  std::set<int> all, hot;
  for (auto it = std::sregex_iterator(round.begin(), round.end(), row); it != std::sregex_iterator(); ++it) {
    all.insert(std::stoi((*it)[1]));
    if ((*it)[2].matched) hot.insert(std::stoi((*it)[1]));
  }
  CHECK(all.size() == 12);
  CHECK(hot == std::set<int>{8, 9, 10});
  CHECK(occurrences(round, "class=\"hot\"") == 3);
  CHECK(occurrences(round, "<span class=\"hot-share\"") == 3);
  // Share badge and the dominant stall as the title.
  CHECK(round.find("<tr id=\"round-1-L10\" class=\"hot\" title=\"line 10: 42% of samples, mostly math pipe busy "
                   "(90% of its samples)\"><td class=\"ln\">10</td><td class=\"heat\"><span class=\"hot-share\" "
                   "aria-label=\"line 10: 42% of samples, mostly math pipe busy (90% of its samples)\">42%</span>"
                   "</td><td class=\"code\">  wgmma.mma_async") != std::string::npos);
  CHECK(round.find("title=\"line 8: 31% of samples, mostly waiting at a CTA barrier (bar.sync) (80% of its "
                   "samples)\"") != std::string::npos);
  CHECK(round.find("<tr id=\"round-1-L7\"><td class=\"ln\">7</td><td class=\"heat\"></td><td class=\"code\">  "
                   "ld.global.v4.u32") != std::string::npos);
  // The top lines, hottest first, each a link to its anchor.
  const auto l10 = round.find("<li><a href=\"#round-1-L10\">line 10</a> <code>wgmma.mma_async");
  const auto l8 = round.find("<li><a href=\"#round-1-L8\">line 8</a> <code>mbarrier.try_wait");
  const auto l9 = round.find("<li><a href=\"#round-1-L9\">line 9</a>");
  CHECK(l10 != std::string::npos);
  CHECK(l8 != std::string::npos);
  CHECK(l9 != std::string::npos);
  CHECK(l10 < l8);
  CHECK(l8 < l9);
  // The listing is the round's full PTX: it is not shown a second time.
  CHECK(round.find("<table class=\"diff\">") != std::string::npos);
  CHECK(round.find("full PTX") == std::string::npos);
  CHECK(round.find("<pre class=\"ptx\">") == std::string::npos);
}

TEST_CASE("viewer profile: a model's script in a PTX line or a function name is shown as text") {
  profiled_db db;
  const std::string page = db.page();
  const std::string escaped = "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;";
  CHECK(occurrences(page, "<script") == 1);  // the layout's own viewer.js
  CHECK(page.find("<script src=\"/assets/viewer.js\" defer></script>") != std::string::npos);
  CHECK(page.find("pwned'") == std::string::npos);
  const std::string round = round_of(page, 1);
  CHECK(round.find("<th class=\"candidate\">yours: launch 0 (" + escaped + ")</th>") != std::string::npos);
  CHECK(round.find("<td class=\"code\">  // " + escaped + "</td>") != std::string::npos);
  CHECK(round.find("<code>// " + escaped + "</code>") != std::string::npos);
}

TEST_CASE("viewer profile: a profiler that could not run says why and the PTX stays plain") {
  profiled_db db;
  const std::string round = round_of(db.page(), 0);
  CHECK(round.find("<div class=\"profile\" id=\"round-0-profile\">") != std::string::npos);
  CHECK(round.find("<p class=\"profile-missing\">kernel counters: not available (the machine cannot profile: "
                   "ERR_NVGPUCTRPERM (counters need admin rights))</p>") != std::string::npos);
  CHECK(round.find("<p class=\"profile-missing\">stall reasons per line: not available (PC sampling: another "
                   "profiler holds the device)</p>") != std::string::npos);
  CHECK(round.find("profile-kernels") == std::string::npos);
  CHECK(round.find("roofline") == std::string::npos);
  CHECK(round.find("ptx-listing") == std::string::npos);
  CHECK(round.find("hot-lines") == std::string::npos);
  CHECK(round.find("<h3>PTX</h3>\n<pre class=\"ptx\">// ptx P0") != std::string::npos);
}

TEST_CASE("viewer profile: an evaluation without a profile shows nothing of one") {
  profiled_db db;
  for (const auto& [name, id] : db.f.trajectories) {
    CAPTURE(name);
    auto r = db.app.get("/trajectories/" + std::to_string(id));
    REQUIRE(r.status == 200);
    CHECK(r.body.find("evaluation") != std::string::npos);
    for (const char* mark : {"class=\"profile\"", "profile-kernels", "profile-missing", "roofline", "hot-lines",
                             "ptx-listing", "class=\"hot\"", "hot-share", "profile at"}) {
      CAPTURE(mark);
      CHECK(r.body.find(mark) == std::string::npos);
    }
  }
  // A round evaluated without a profile keeps its plain PTX.
  CHECK(db.app.get("/trajectories/" + std::to_string(db.f.trajectories["C"])).body.find("<h3>PTX</h3>\n<pre class=\"ptx\">") !=
        std::string::npos);
}

TEST_CASE("viewer profile: the JSON API returns the profile with the evaluation unescaped") {
  profiled_db db;
  auto r = db.app.get("/api/trajectories/" + std::to_string(db.trajectory));
  REQUIRE(r.status == 200);
  auto j = nlohmann::json::parse(r.body);
  REQUIRE(j["turns"].size() == 2);
  const auto& p = j["turns"][1]["evaluation"]["result"]["profile"];
  REQUIRE(p.is_object());
  // As the project reads a stored result: the library's unmeasured tensor pipe (NaN) was stored as null.
  CHECK(p["kernels"][0]["tensor_pipe_pct"].is_null());
  auto back = evaluation_result_from_json(j["turns"][1]["evaluation"]["result"]).profile.value();
  REQUIRE(back.kernels.size() == 2);
  CHECK(back.kernels[1].name == "yours: launch 0 (" + testing::profile_evil + ")");
  CHECK(back.kernels[1].registers_per_thread == 168);
  REQUIRE(back.lines.size() == 3);
  CHECK(back.lines[0].line == 10);
  CHECK(back.lines[2].text == "// " + testing::profile_evil);
  CHECK(back.roofline.bound == "compute");
  CHECK(j["turns"][0]["evaluation"]["result"]["profile"]["kernels_error"] ==
        testing::unavailable_profile().kernels_error);
  // An evaluation without one has none.
  auto a = nlohmann::json::parse(db.app.get("/api/trajectories/" + std::to_string(db.f.trajectories["A"])).body);
  CHECK_FALSE(a["turns"][2]["evaluation"]["result"].contains("profile"));
}

TEST_CASE("viewer profile: waits on local memory lead when they outweigh the hottest line and link to the listing") {
  profile_report p;
  p.size = "M=4096 N=4096 K=4096";
  p.samples = 1000;
  p.lines = {{2, "mbarrier.try_wait.parity.shared::cta.b64 p, [%r1], %r2;", 0.13, 130, "long_scoreboard", "", 0.9},
             {3, "ld.local.f32 %f1, [%rd1];", 0.08, 80, "long_scoreboard", "", 1}};
  p.local_wait_share = 0.40;
  p.local_wait_lines = 128;
  p.local_wait_top = {{3, "ld.local.f32 %f1, [%rd1];", 0.08, 80, "long_scoreboard", "", 1},
                      {40, "ld.local.f32 %f2, [%rd1+4];", 0.07, 70, "long_scoreboard", "", 1}};
  const std::string ptx = "a\nb\nc\n";
  std::string html = profile_section(p, ptx, "round-1");
  const size_t local = html.find("<p class=\"local-memory\"><b>local memory:</b> 40% of samples wait on local-memory "
                                 "loads, over 128 lines (registers spilled by ptxas, or .local arrays); most at "
                                 "<a href=\"#round-1-L3\">line 3</a> <code>ld.local.f32 %f1, [%rd1];</code> (8%), "
                                 "line 40 <code>ld.local.f32 %f2, [%rd1+4];</code> (7%).</p>");
  REQUIRE(local != std::string::npos);
  CHECK(local < html.find("hottest lines of the PTX"));
  p.local_wait_share = 0.10;  // under the hottest line's 13%: after the lines
  html = profile_section(p, ptx, "round-1");
  CHECK(html.find("local memory:</b> 10%") > html.find("hottest lines of the PTX"));
  p.local_wait_share = 0.04;  // under 5%: not shown
  CHECK(profile_section(p, ptx, "round-1").find("local-memory") == std::string::npos);
}
