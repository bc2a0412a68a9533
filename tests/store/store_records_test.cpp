// Evaluations, LLM failures, and opening files that are not what they should be.
#include <doctest/doctest.h>

#include <fstream>

#include "evaluator/common/utf8.hpp"
#include "tests/store/store_test_util.hpp"

using namespace ptxbench;
using namespace ptxbench::store_test;

namespace {

struct one_turn {
  int64_t experiment = 0;
  int64_t trajectory = 0;
  int64_t candidate = 0;
};

one_turn write_one_turn(run_store& store, const std::string& name) {
  one_turn ids;
  ids.experiment = store.create_experiment(sample_experiment(name));
  ids.trajectory = store.ensure_trajectory(ids.experiment, "softmax", "reduction", 0);
  turn_row turn;
  turn.trajectory_id = ids.trajectory;
  candidate_row candidate;
  candidate.ptx = ".version 8.8";
  const int64_t turn_id = store.record_turn(turn, candidate);
  ids.candidate = store.turns(ids.trajectory).at(0).candidate->id;
  CHECK(store.candidate_id(turn_id) == ids.candidate);  // the turn's own candidate, without reading the turns
  CHECK_FALSE(store.candidate_id(turn_id + 1000));
  return ids;
}

evaluation_row evaluation(int64_t candidate_id, const std::string& verdict, std::optional<double> speedup) {
  evaluation_row e;
  e.candidate_id = candidate_id;
  e.evaluator_version = "0.1.0";
  e.gpu = "NVIDIA H200";
  e.verdict = verdict;
  e.passed = verdict == "passed";
  e.correct = verdict == "passed" || verdict == "performance";
  e.instructions_ok = e.correct;
  e.speedup = speedup;
  e.result = {{"stages", {{"compile", "passed"}}}, {"headline", verdict}};
  return e;
}

}  // namespace

TEST_CASE("evaluations: turns() shows the latest - speedup may be absent - replay links its origin") {
  temp_folder dir;
  const auto file = dir / "run.db";
  auto store = run_store::open(file);
  const one_turn ids = write_one_turn(*store, "e");

  const int64_t first = store->record_evaluation(evaluation(ids.candidate, "compile", std::nullopt));
  auto view = store->turns(ids.trajectory).at(0);
  REQUIRE(view.evaluation);
  CHECK(view.evaluation->id == first);
  CHECK(view.evaluation->verdict == "compile");
  CHECK_FALSE(view.evaluation->speedup);
  CHECK_FALSE(view.evaluation->passed);
  CHECK(sql_count(file, "SELECT count(*) FROM evaluations WHERE speedup IS NULL") == 1);

  evaluation_row again = evaluation(ids.candidate, "passed", 1.75);
  again.origin_evaluation_id = first;
  const int64_t second = store->record_evaluation(again);
  view = store->turns(ids.trajectory).at(0);
  REQUIRE(view.evaluation);
  CHECK(view.evaluation->id == second);
  CHECK(view.evaluation->passed);
  CHECK(view.evaluation->correct);
  CHECK(view.evaluation->instructions_ok);
  REQUIRE(view.evaluation->speedup);
  CHECK(*view.evaluation->speedup == doctest::Approx(1.75));
  CHECK(view.evaluation->origin_evaluation_id == first);
  CHECK(view.evaluation->result == again.result);
  CHECK(view.evaluation->gpu == "NVIDIA H200");
  CHECK(sql_count(file, "SELECT count(*) FROM evaluations") == 2);

  CHECK_THROWS_AS(store->record_evaluation(evaluation(9999, "passed", 1.0)), store_error);
}

TEST_CASE("LLM failures are listed per experiment - oldest first") {
  temp_folder dir;
  auto store = run_store::open(dir / "run.db");
  const one_turn a = write_one_turn(*store, "a");
  const one_turn b = write_one_turn(*store, "b");
  llm_failure_row f;
  f.trajectory_id = a.trajectory;
  f.round = 2;
  f.attempt = 1;
  f.http_status = 429;
  f.cause = "rate limited; Retry-After 3";
  f.elapsed_ms = 80.5;
  store->record_llm_failure(f);
  f.attempt = 2;
  f.http_status = 0;
  f.cause = "timeout after 120 s";
  f.final = true;
  store->record_llm_failure(f);

  const auto failures = store->llm_failures(a.experiment);
  REQUIRE(failures.size() == 2);
  CHECK(failures[0].http_status == 429);
  CHECK(failures[0].cause == "rate limited; Retry-After 3");
  CHECK(failures[0].round == 2);
  CHECK(failures[0].elapsed_ms == doctest::Approx(80.5));
  CHECK_FALSE(failures[0].final);
  CHECK(failures[1].attempt == 2);
  CHECK(failures[1].final);
  CHECK_FALSE(failures[1].created_at.empty());
  CHECK(store->llm_failures(b.experiment).empty());
}

TEST_CASE("read-only open: missing file - foreign file and newer schema are refused with the file named") {
  temp_folder dir;
  const auto missing = dir / "missing.db";
  try {
    run_store::open(missing, true);
    FAIL("opened a missing file");
  } catch (const store_error& e) {
    CHECK(std::string(e.what()).find(missing.string()) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(missing));

  const auto text = dir / "notes.db";
  std::ofstream(text) << "these are notes, not a database, and long enough to hold a header.............\n";
  for (bool read_only : {true, false}) {
    try {
      run_store::open(text, read_only);
      FAIL("opened a text file");
    } catch (const store_error& e) {
      CHECK(std::string(e.what()).find(text.string()) != std::string::npos);
      CHECK(std::string(e.what()).find("not a database") != std::string::npos);
    }
  }

  // A database of a newer schema (written by a later ptxbench) is not misread.
  const auto newer = dir / "newer.db";
  run_store::open(newer).reset();
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(newer.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr,
                       nullptr) == SQLITE_OK);
  sqlite3_close(db);
  // Both are the user's input, not a failure of the machine (exit 2, not 3).
  CHECK_THROWS_WITH_AS(run_store::open(newer, true), doctest::Contains("schema version 99"), not_a_run_database);
  CHECK_THROWS_WITH_AS(run_store::open(newer, false), doctest::Contains("schema version 99"), not_a_run_database);

  // A copy cut short (an interrupted transfer) says so, and is bad input too.
  const auto whole = dir / "whole.db";
  {
    auto store = run_store::open(whole);
    for (int i = 0; i < 40; ++i) write_one_turn(*store, "e" + std::to_string(i));
  }
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 16384);
  const auto truncated = dir / "truncated.db";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  for (bool read_only : {true, false})
    CHECK_THROWS_WITH_AS(run_store::open(truncated, read_only), doctest::Contains("damaged or truncated"),
                         not_a_run_database);
}

TEST_CASE("a read-only store reads while a writer is active and refuses to write") {
  temp_folder dir;
  const auto file = dir / "run.db";
  auto writer = run_store::open(file);
  const one_turn ids = write_one_turn(*writer, "e");

  auto reader = run_store::open(file, true);
  CHECK(reader->find_experiment("e"));
  CHECK(reader->turns(ids.trajectory).size() == 1);

  // The writer keeps going; the reader sees each commit on its next read.
  turn_row next;
  next.trajectory_id = ids.trajectory;
  next.round = 1;
  writer->record_turn(next, candidate_row{});
  CHECK(reader->turns(ids.trajectory).size() == 2);
  CHECK_THROWS_WITH_AS(reader->create_experiment(sample_experiment("r")), doctest::Contains("opened read-only"),
                       store_error);
  CHECK_THROWS_AS(reader->record_turn(next, candidate_row{}), store_error);
  CHECK(writer->experiments().size() == 1);
}

namespace {

// Every TEXT value in every table of the file, as (table.column, bytes).
std::vector<std::pair<std::string, std::string>> every_text_cell(const std::filesystem::path& file) {
  std::vector<std::pair<std::string, std::string>> out;
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  std::vector<std::string> tables;
  sqlite3_stmt* list = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &list, nullptr) == SQLITE_OK);
  while (sqlite3_step(list) == SQLITE_ROW) tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(list, 0)));
  sqlite3_finalize(list);
  for (const auto& table : tables) {
    sqlite3_stmt* rows = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, ("SELECT * FROM \"" + table + "\"").c_str(), -1, &rows, nullptr) == SQLITE_OK);
    while (sqlite3_step(rows) == SQLITE_ROW)
      for (int c = 0; c < sqlite3_column_count(rows); ++c)
        if (sqlite3_column_type(rows, c) == SQLITE_TEXT) {
          const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_blob(rows, c));
          out.emplace_back(table + "." + sqlite3_column_name(rows, c),
                           std::string(bytes ? bytes : "", sqlite3_column_bytes(rows, c)));
        }
    sqlite3_finalize(rows);
  }
  sqlite3_close(db);
  return out;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    if (n == 2 && b < 0xC2) return false;  // overlong
    i += n;
  }
  return true;
}

}  // namespace

TEST_CASE("every text column holds valid UTF-8 - bytes a server or a model sent are repaired and never stored raw") {
  temp_folder dir;
  const auto file = dir / "run.db";
  const std::string bad = "cut \xe2\x82 here, stray \xff\xfe, overlong \xc0\xaf, fine \xe2\x82\xac";
  {
    auto s = run_store::open(file);
    auto ids = write_one_turn(*s, "utf8");
    // An HTTP error body that was no UTF-8 (seen from a proxy's error page).
    s->record_llm_failure({0, ids.trajectory, 0, 1, 502, "HTTP 502: " + bad, 12.0, true, ""});
    s->record_agent_error({0, ids.trajectory, 0, "reply", bad, ""});
    turn_row turn;
    turn.trajectory_id = ids.trajectory;
    turn.round = 1;
    turn.reply = bad;
    turn.reasoning = bad;
    turn.feedback = bad;
    turn.model = bad;
    candidate_row candidate;
    candidate.ptx = bad;
    candidate.manifest = bad;
    candidate.format_problem = bad;
    s->record_turn(turn, candidate);
    auto e = evaluation(ids.candidate, "compile", std::nullopt);
    e.gpu = bad;
    s->record_evaluation(e);
    auto failures = s->llm_failures(ids.experiment);
    REQUIRE(failures.size() == 1);
    // Readable through the store, the bad bytes as U+FFFD and the good character kept.
    CHECK(failures[0].cause.find("\xef\xbf\xbd") != std::string::npos);
    CHECK(failures[0].cause.find("fine \xe2\x82\xac") != std::string::npos);
  }
  int cells = 0;
  for (const auto& [column, text] : every_text_cell(file)) {
    INFO(column);
    CHECK(valid_utf8(text));
    ++cells;
  }
  CHECK(cells > 20);
}

// A cause quoting a proxy's raw bytes was stored as they came, and Python's
// sqlite3 raised on reading the row (every export and notebook with it).
TEST_CASE("an LLM failure's cause is stored as valid UTF-8 - bad bytes as replacement characters") {
  temp_folder dir;
  auto store = run_store::open(dir / "run.db");
  const one_turn a = write_one_turn(*store, "a");
  llm_failure_row f;
  f.trajectory_id = a.trajectory;
  f.http_status = 502;
  f.cause = "HTTP 502: caf\xc3\xa9 \xff\xfe gateway \xc3";
  store->record_llm_failure(f);
  const auto failures = store->llm_failures(a.experiment);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].cause == "HTTP 502: caf\xc3\xa9 \xEF\xBF\xBD\xEF\xBF\xBD gateway \xEF\xBF\xBD");
  CHECK(failures[0].cause == ptxbench::utf8_repaired(failures[0].cause));
}
