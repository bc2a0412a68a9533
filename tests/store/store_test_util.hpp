#pragma once
// Helpers for the store tests: a fresh temporary folder per test and raw SQL
// probes that look at the file the way an outside reader (or sqlite3) would.
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "agent/store/store.hpp"

namespace ptxbench::store_test {

// A folder under the system temp dir, removed with everything in it at scope end.
class temp_folder {
 public:
  temp_folder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ptxbench-store-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    m_path = pattern;
  }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
  ~temp_folder() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

 private:
  std::filesystem::path m_path;
};

// The first column of the first row of sql, as text, read through a separate
// read-only connection. Throws std::runtime_error on any SQLite error.
inline std::string sql_text(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + file.string());
  }
  sqlite3_busy_timeout(db, 10000);
  sqlite3_stmt* stmt = nullptr;
  std::string value;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    value = text != nullptr ? text : "NULL";
  }
  const std::string message = sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw std::runtime_error(sql + ": " + message);
  return value;
}

inline long long sql_count(const std::filesystem::path& file, const std::string& sql) {
  return std::stoll(sql_text(file, sql));
}

inline experiment_row sample_experiment(const std::string& name) {
  experiment_row e;
  e.name = name;
  e.config = {{"model", "m"}, {"rounds", 3}, {"tasks", {"vector_add"}}};
  e.evaluator_version = "0.1.0";
  e.host = "host-a";
  e.gpu = "NVIDIA H200";
  e.model = "m";
  e.provider = "openai";
  return e;
}

}  // namespace ptxbench::store_test
