// request_log over one SQLite connection, serialised by a mutex (the service
// appends from many handler threads at once).
#include "agent/store/request_log.hpp"

#include <mutex>
#include <system_error>

#include "agent/store/schema.hpp"
#include "agent/store/sqlite_handle.hpp"
#include "agent/store/store.hpp"
#include "agent/store/store_rows.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench {
namespace {

using namespace store_detail;

class sqlite_request_log final : public request_log {
 public:
  explicit sqlite_request_log(const std::filesystem::path& path) : m_db(path, false) { apply_schema(m_db); }

  int64_t append(const service_request_row& row) override {
    std::lock_guard lock(m_mutex);
    write_transaction tx(m_db);
    statement insert = m_db.query(
        "INSERT INTO service_requests (received_at, endpoint, http_status, item_index, request, result, error,"
        " elapsed_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    insert.bind(1, row.received_at.empty() ? utc_now_iso8601() : row.received_at);
    // The text columns hold what clients and models sent, repaired to valid
    // UTF-8: a row of other bytes is one that Python's sqlite3 cannot read.
    insert.bind(2, utf8_repaired(row.endpoint));
    insert.bind(3, row.http_status);
    insert.bind(4, row.item_index);
    insert.bind(5, utf8_repaired(row.request));
    if (row.result.is_null()) insert.bind_null(6);
    else insert.bind(6, json_text(row.result));
    insert.bind(7, utf8_repaired(row.error));
    insert.bind(8, row.elapsed_ms);
    insert.run();
    const int64_t id = m_db.last_insert_id();
    tx.commit();
    return id;
  }

  std::vector<service_request_row> rows(int64_t after, int limit) override {
    std::lock_guard lock(m_mutex);
    statement q = m_db.query(
        "SELECT id, received_at, endpoint, http_status, item_index, request, result, error, elapsed_ms"
        " FROM service_requests WHERE id > ?1 ORDER BY id LIMIT ?2");
    q.bind(1, after);
    q.bind(2, limit);
    std::vector<service_request_row> out;
    while (q.step()) {
      service_request_row r;
      r.id = q.int64_at(0);
      r.received_at = q.text_at(1);
      r.endpoint = q.text_at(2);
      r.http_status = q.int_at(3);
      r.item_index = q.int_at(4);
      r.request = q.text_at(5);
      if (!q.is_null(6)) {
        r.result = nlohmann::json::parse(q.text_at(6), nullptr, false);
        if (r.result.is_discarded())
          throw store_error(describe(m_db.file(), "service_requests row " + std::to_string(r.id) +
                                                      ": result is not JSON"));
      }
      r.error = q.text_at(7);
      r.elapsed_ms = q.double_at(8);
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  std::mutex m_mutex;
  connection m_db;
};

}  // namespace

std::unique_ptr<request_log> request_log::open(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      throw store_error(describe(path.string(), "cannot create folder '" + path.parent_path().string() + "': " +
                                                    ec.message()));
  }
  return std::make_unique<sqlite_request_log>(path);
}

}  // namespace ptxbench
