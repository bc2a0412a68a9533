#pragma once
// RAII over the SQLite C API, private to the store folder. Every failure throws
// store_error whose message names the database file, what was being done and
// SQLite's own message, e.g.
//   run database 'runs/a.db': INSERT INTO turns: FOREIGN KEY constraint failed
// None of these types is thread-safe: the caller (sqlite_store) serialises all
// use of one connection with its mutex.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace ptxbench::store_detail {

// A cached prepared statement in use. Binding indexes are 1-based, column
// indexes 0-based (as in SQLite). The destructor resets the statement and
// clears its bindings so the cache can hand it out again.
class statement {
 public:
  statement(sqlite3* db, sqlite3_stmt* stmt, const std::string* file);
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement();

  void bind(int index, int64_t value);
  void bind(int index, int value) { bind(index, static_cast<int64_t>(value)); }
  void bind(int index, bool value) { bind(index, static_cast<int64_t>(value ? 1 : 0)); }
  void bind(int index, double value);
  void bind(int index, const std::string& value);
  void bind(int index, std::optional<double> value);
  void bind(int index, std::optional<int64_t> value);
  void bind_null(int index);
  // Binds NULL for the empty string: columns that mean "not yet" (finished_at).
  void bind_text_or_null(int index, const std::string& value);

  // Advances; true when a row is ready, false when the statement is done.
  bool step();
  // Steps a statement that must not return rows (INSERT, UPDATE).
  void run();

  bool is_null(int column) const;
  int64_t int64_at(int column) const;
  int int_at(int column) const { return static_cast<int>(int64_at(column)); }
  bool bool_at(int column) const { return int64_at(column) != 0; }
  double double_at(int column) const;
  std::string text_at(int column) const;  // "" for NULL
  std::optional<int64_t> optional_int64_at(int column) const;
  std::optional<double> optional_double_at(int column) const;

 private:
  [[noreturn]] void fail(int rc, const char* action) const;

  sqlite3* m_db;
  sqlite3_stmt* m_stmt;
  const std::string* m_file;
};

// One open database connection with its prepared-statement cache.
class connection {
 public:
  // Opens the file. Writable: creates it if missing, switches to WAL,
  // synchronous=NORMAL, foreign keys on. read_only: SQLITE_OPEN_READONLY, the
  // file must exist; reading works while another process writes (WAL).
  // Both: a busy timeout, so a short lock held elsewhere waits instead of failing.
  connection(const std::filesystem::path& file, bool read_only);
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection();

  // Runs one or more statements that return no rows.
  void exec(const char* sql);
  // The cached prepared statement for sql (prepared on first use). One SQL text
  // is one statement: do not hold two uses of the same text at once.
  statement query(const char* sql);
  int64_t last_insert_id() const;
  int changes() const;
  const std::string& file() const { return m_file; }
  bool read_only() const { return m_read_only; }

  // Throws store_error: "run database '<file>': <what>: <sqlite message>".
  [[noreturn]] void fail(const std::string& what, int rc) const;

 private:
  std::string m_file;
  bool m_read_only;
  sqlite3* m_db = nullptr;
  std::map<std::string, sqlite3_stmt*> m_cache;
};

// BEGIN IMMEDIATE on construction, so a writer takes the write lock up front
// and never fails half-way on a lock upgrade; ROLLBACK on destruction unless
// commit() ran, so an exception leaves nothing half-written.
class write_transaction {
 public:
  explicit write_transaction(connection& db);
  write_transaction(const write_transaction&) = delete;
  write_transaction& operator=(const write_transaction&) = delete;
  ~write_transaction();
  void commit();

 private:
  connection& m_db;
  bool m_open = true;
};

// Current time as ISO 8601 UTC with milliseconds: 2026-12-02T09:20:39.123Z.
std::string utc_now_iso8601();

// "run database '<file>': <what>" — the prefix of every store_error.
std::string describe(const std::string& file, const std::string& what);

}  // namespace ptxbench::store_detail
