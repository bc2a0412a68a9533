#pragma once
// The run database's schema and its version check (private to the store).
#include "agent/store/sqlite_handle.hpp"

namespace ptxbench::store_detail {

// Bumped whenever a table or column changes; stored in meta.schema_version.
constexpr int k_schema_version = 1;

// Creates every table and index that is missing and records the schema version,
// in one transaction. Throws store_error if the file was written by a newer
// ptxbench (a higher schema version) or is not a run database.
void apply_schema(connection& db);

// For read-only opens: checks that the file is a run database this build can
// read, writing nothing. Throws store_error otherwise.
void check_schema(connection& db);

}  // namespace ptxbench::store_detail
