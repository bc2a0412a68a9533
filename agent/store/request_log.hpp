#pragma once
// The evaluation service's log: every request it answered and every result
// it returned, one row per evaluated item (a batch of n is n rows with its
// index), so a run of the service can be replayed against another evaluator.
// Lives in a run database (the same schema and version checks as run_store),
// in its own table `service_requests`. Thread-safe.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ptxbench {

struct service_request_row {
  int64_t id = 0;
  std::string received_at;   // ISO 8601 UTC; filled on append when empty
  std::string endpoint;      // "/v1/evaluate" or "/v1/evaluate/batch"
  int http_status = 0;       // the status the whole request was answered with
  int item_index = 0;        // position in a batch; 0 for single requests
  std::string request;       // the item as received (JSON text, or the raw body when it did not parse)
  nlohmann::json result;     // the evaluation result; null for rejected requests
  std::string error;         // why a request was rejected (400, 401, 429...), "" otherwise
  double elapsed_ms = 0.0;
};

class request_log {
 public:
  // Opens (creating when missing) a run database and its service table.
  // Throws store_error naming the file.
  static std::unique_ptr<request_log> open(const std::filesystem::path& path);
  virtual ~request_log() = default;

  virtual int64_t append(const service_request_row& row) = 0;
  // Rows in the order they were written, from id `after` on (0: from the start), at most `limit`.
  virtual std::vector<service_request_row> rows(int64_t after = 0, int limit = 1000) = 0;
};

}  // namespace ptxbench
