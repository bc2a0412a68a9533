#include "agent/store/sqlite_handle.hpp"

#include <chrono>
#include <cstring>
#include <ctime>
#include <system_error>

#include "agent/store/store.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench::store_detail {
namespace {

// Long enough to ride out a checkpoint or another process's transaction, short
// enough that a database locked for good is reported rather than hanging a run.
constexpr int k_busy_timeout_ms = 30000;

// The head of a statement's SQL, as context in an error message.
std::string sql_head(const char* sql) {
  std::string head;
  for (const char* p = sql; p != nullptr && *p != '\0' && head.size() < 48; ++p) {
    const char c = (*p == '\n' || *p == '\t') ? ' ' : *p;
    if (c == ' ' && (head.empty() || head.back() == ' ')) continue;
    if (c == '(') break;
    head += c;
  }
  while (!head.empty() && head.back() == ' ') head.pop_back();
  return head;
}

// SQLITE_NOTADB: the file exists but is not SQLite (a config, a PTX file).
// SQLITE_CORRUPT: a copy cut short or damaged. Both are the file the user gave.
[[noreturn]] void throw_store_error(int rc, const std::string& message) {
  if ((rc & 0xff) == SQLITE_NOTADB) throw not_a_run_database(message);
  if ((rc & 0xff) == SQLITE_CORRUPT) throw not_a_run_database(message + " (the file is damaged or truncated)");
  throw store_error(message);
}

}  // namespace

std::string describe(const std::string& file, const std::string& what) {
  return "run database '" + file + "': " + what;
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms));
  return text;
}

// --- statement ---

statement::statement(sqlite3* db, sqlite3_stmt* stmt, const std::string* file)
    : m_db(db), m_stmt(stmt), m_file(file) {}

statement::~statement() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

void statement::fail(int rc, const char* action) const {
  const char* message = sqlite3_errmsg(m_db);
  throw_store_error(rc, describe(*m_file, sql_head(sqlite3_sql(m_stmt)) + ": " + action +
                                              (message != nullptr ? message : sqlite3_errstr(rc))));
}

void statement::bind(int index, int64_t value) {
  if (int rc = sqlite3_bind_int64(m_stmt, index, value); rc != SQLITE_OK) fail(rc, "bind: ");
}

void statement::bind(int index, double value) {
  if (int rc = sqlite3_bind_double(m_stmt, index, value); rc != SQLITE_OK) fail(rc, "bind: ");
}

void statement::bind(int index, const std::string& value) {
  // Every TEXT column holds valid UTF-8, whatever a model, a server or a file
  // gave us (an HTTP error body in llm_failures.cause, a reply cut inside a
  // character): SQLite stores the bytes as given, and readers such as
  // Python's sqlite3 fail on the whole row otherwise. Bad bytes become U+FFFD.
  const std::string repaired = utf8_valid(value) ? std::string() : utf8_repaired(value);
  const std::string& text = repaired.empty() ? value : repaired;
  // SQLITE_TRANSIENT: SQLite copies the bytes, so the argument may die before step().
  const int rc = sqlite3_bind_text64(m_stmt, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) fail(rc, "bind: ");
}

void statement::bind(int index, std::optional<double> value) {
  if (value) bind(index, *value);
  else bind_null(index);
}

void statement::bind(int index, std::optional<int64_t> value) {
  if (value) bind(index, *value);
  else bind_null(index);
}

void statement::bind_null(int index) {
  if (int rc = sqlite3_bind_null(m_stmt, index); rc != SQLITE_OK) fail(rc, "bind: ");
}

void statement::bind_text_or_null(int index, const std::string& value) {
  if (value.empty()) bind_null(index);
  else bind(index, value);
}

bool statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(rc, "");
}

void statement::run() {
  if (step()) fail(SQLITE_MISUSE, "statement returned a row where none was expected: ");
}

bool statement::is_null(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }

int64_t statement::int64_at(int column) const { return sqlite3_column_int64(m_stmt, column); }

double statement::double_at(int column) const { return sqlite3_column_double(m_stmt, column); }

std::string statement::text_at(int column) const {
  // Text first, then bytes: sqlite3_column_bytes after column_text is the text's length.
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column)));
}

std::optional<int64_t> statement::optional_int64_at(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64_at(column);
}

std::optional<double> statement::optional_double_at(int column) const {
  if (is_null(column)) return std::nullopt;
  return double_at(column);
}

// --- connection ---

connection::connection(const std::filesystem::path& file, bool read_only)
    : m_file(file.string()), m_read_only(read_only) {
  const int flags = read_only ? SQLITE_OPEN_READONLY
                              : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  // NOMUTEX: sqlite_store serialises every use of the connection itself.
  const int rc = sqlite3_open_v2(m_file.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = m_db != nullptr ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    sqlite3_close_v2(m_db);
    m_db = nullptr;
    throw store_error(describe(m_file, "cannot open: " + message));
  }
  sqlite3_extended_result_codes(m_db, 1);
  sqlite3_busy_timeout(m_db, k_busy_timeout_ms);
  try {
    if (!read_only) {
      // journal_mode answers with the mode in force: anything but "wal" (a file
      // system without shared memory, say) would lose the crash guarantees.
      statement mode = query("PRAGMA journal_mode=WAL");
      if (!mode.step() || mode.text_at(0) != "wal")
        throw store_error(describe(m_file, "cannot switch to WAL mode (journal_mode is '" +
                                               mode.text_at(0) + "')"));
    }
    exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  } catch (...) {
    for (auto& [sql, stmt] : m_cache) sqlite3_finalize(stmt);
    sqlite3_close_v2(m_db);
    throw;
  }
}

connection::~connection() {
  for (auto& [sql, stmt] : m_cache) sqlite3_finalize(stmt);
  sqlite3_close_v2(m_db);
}

void connection::fail(const std::string& what, int rc) const {
  const char* message = m_db != nullptr ? sqlite3_errmsg(m_db) : nullptr;
  throw_store_error(rc, describe(m_file, what + ": " + (message != nullptr ? message : sqlite3_errstr(rc))));
}

void connection::exec(const char* sql) {
  if (int rc = sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr); rc != SQLITE_OK) fail(sql_head(sql), rc);
}

statement connection::query(const char* sql) {
  auto it = m_cache.find(sql);
  if (it == m_cache.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(m_db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) fail("prepare " + sql_head(sql), rc);
    it = m_cache.emplace(sql, stmt).first;
  }
  return statement(m_db, it->second, &m_file);
}

int64_t connection::last_insert_id() const { return sqlite3_last_insert_rowid(m_db); }

int connection::changes() const { return sqlite3_changes(m_db); }

// --- write_transaction ---

write_transaction::write_transaction(connection& db) : m_db(db) {
  if (m_db.read_only()) throw store_error(describe(m_db.file(), "opened read-only, cannot write"));
  m_db.exec("BEGIN IMMEDIATE");
}

write_transaction::~write_transaction() {
  if (!m_open) return;
  try {
    m_db.exec("ROLLBACK");
  } catch (const store_error&) {
    // A failed ROLLBACK means SQLite already rolled back (e.g. after SQLITE_FULL);
    // a destructor must not throw, and the original error is on its way up.
  }
}

void write_transaction::commit() {
  m_db.exec("COMMIT");
  m_open = false;
}

}  // namespace ptxbench::store_detail
