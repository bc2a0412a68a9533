#include "agent/store/schema.hpp"

#include <string>
#include <vector>

#include "agent/store/store.hpp"

namespace ptxbench::store_detail {
namespace {

// Conventions: JSON columns are TEXT holding one JSON document; booleans are
// INTEGER 0/1; timestamps are TEXT in ISO 8601 UTC (2026-12-02T09:20:39.123Z);
// NULL means "not yet" (finished_at, final_verdict) or "absent" (speedup).
// parent_experiment_id and origin_evaluation_id point into another database
// (the one a replay re-evaluates), so they carry no foreign key.
constexpr const char* k_schema_sql = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS experiments (
  id                   INTEGER PRIMARY KEY,
  name                 TEXT NOT NULL UNIQUE,
  kind                 TEXT NOT NULL CHECK (kind IN ('run', 'replay')),
  config               TEXT NOT NULL,
  evaluator_version    TEXT NOT NULL,
  host                 TEXT NOT NULL,
  gpu                  TEXT NOT NULL,
  model                TEXT NOT NULL,
  provider             TEXT NOT NULL,
  status               TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted')),
  created_at           TEXT NOT NULL,
  finished_at          TEXT,
  parent_experiment_id INTEGER,
  parent_database      TEXT NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS trajectories (
  id            INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  task_id       TEXT NOT NULL,
  family        TEXT NOT NULL,
  sample        INTEGER NOT NULL,
  status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
  rounds_done   INTEGER NOT NULL DEFAULT 0,
  final_verdict TEXT,
  passed        INTEGER NOT NULL DEFAULT 0 CHECK (passed IN (0, 1)),
  created_at    TEXT NOT NULL,
  finished_at   TEXT,
  UNIQUE (experiment_id, task_id, sample)
);

CREATE TABLE IF NOT EXISTS turns (
  id                INTEGER PRIMARY KEY,
  trajectory_id     INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
  round             INTEGER NOT NULL CHECK (round >= 0),
  messages          TEXT NOT NULL,
  feedback          TEXT NOT NULL,
  feedback_detail   TEXT NOT NULL,
  reply             TEXT NOT NULL,
  reasoning         TEXT NOT NULL,
  finish_reason     TEXT NOT NULL,
  model             TEXT NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  reasoning_tokens  INTEGER NOT NULL,
  latency_ms        REAL NOT NULL,
  created_at        TEXT NOT NULL,
  UNIQUE (trajectory_id, round)
);

CREATE TABLE IF NOT EXISTS candidates (
  id             INTEGER PRIMARY KEY,
  turn_id        INTEGER NOT NULL UNIQUE REFERENCES turns (id) ON DELETE CASCADE,
  ptx            TEXT NOT NULL,
  manifest       TEXT NOT NULL,
  format_problem TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS evaluations (
  id                   INTEGER PRIMARY KEY,
  candidate_id         INTEGER NOT NULL REFERENCES candidates (id) ON DELETE CASCADE,
  evaluator_version    TEXT NOT NULL,
  gpu                  TEXT NOT NULL,
  verdict              TEXT NOT NULL,
  passed               INTEGER NOT NULL CHECK (passed IN (0, 1)),
  correct              INTEGER NOT NULL CHECK (correct IN (0, 1)),
  instructions_ok      INTEGER NOT NULL CHECK (instructions_ok IN (0, 1)),
  speedup              REAL,
  result               TEXT NOT NULL,
  origin_evaluation_id INTEGER,
  created_at           TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS llm_failures (
  id            INTEGER PRIMARY KEY,
  trajectory_id INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
  round         INTEGER NOT NULL,
  attempt       INTEGER NOT NULL,
  http_status   INTEGER NOT NULL,
  cause         TEXT NOT NULL,
  elapsed_ms    REAL NOT NULL,
  final         INTEGER NOT NULL CHECK (final IN (0, 1)),
  created_at    TEXT NOT NULL
);

-- turns by trajectory and trajectories by experiment are served by their
-- UNIQUE constraints' indexes; these serve the other readers.
CREATE INDEX IF NOT EXISTS evaluations_by_candidate ON evaluations (candidate_id, id);
CREATE INDEX IF NOT EXISTS llm_failures_by_trajectory ON llm_failures (trajectory_id, round);
)sql";

// Columns added after a table's first release. A database written by an
// earlier ptxbench gets them on open (ALTER TABLE ... ADD COLUMN), so each
// feature adds its rows here instead of bumping the version: an older binary
// still reads a newer file's tables (it ignores columns it does not know).
// Each declaration must be valid for ADD COLUMN (a constant DEFAULT, or NULL).
struct added_column {
  const char* table;
  const char* column;
  const char* declaration;
};
const std::vector<added_column> k_added_columns = {
    // {"table", "column", "TEXT"},
    // Mutation data (ptxbench mutate): where a trajectory's failed attempt came from.
    {"trajectories", "source", "TEXT NOT NULL DEFAULT 'model'"},
    {"trajectories", "mutation_operator", "TEXT NOT NULL DEFAULT ''"},
    // Near-duplicate candidates (ptx_fingerprint.hpp): the fingerprint and the
    // earliest candidate of the same task that has it.
    {"candidates", "normalised_hash", "TEXT NOT NULL DEFAULT ''"},
    {"candidates", "duplicate_of", "INTEGER"},
    // Teacher endpoints: who wrote a turn's reply.
    {"turns", "author", "TEXT NOT NULL DEFAULT 'student'"},
};

// Tables added after the first release: CREATE TABLE IF NOT EXISTS statements.
constexpr const char* k_added_tables[] = {
    "CREATE TABLE IF NOT EXISTS schema_changes (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
    // Evaluation service (ptxbench evald): every request and result, for replay (request_log.hpp).
    "CREATE TABLE IF NOT EXISTS service_requests (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,"
    " endpoint TEXT NOT NULL, http_status INTEGER NOT NULL, item_index INTEGER NOT NULL, request TEXT NOT NULL,"
    " result TEXT, error TEXT NOT NULL, elapsed_ms REAL NOT NULL)",
    // Containment: the errors of the agent itself recorded on a turn or trajectory.
    "CREATE TABLE IF NOT EXISTS agent_errors (id INTEGER PRIMARY KEY, trajectory_id INTEGER NOT NULL"
    " REFERENCES trajectories (id) ON DELETE CASCADE, round INTEGER NOT NULL, step TEXT NOT NULL,"
    " message TEXT NOT NULL, created_at TEXT NOT NULL)",
    // One writer per experiment: the process that runs it, and when it last said so.
    "CREATE TABLE IF NOT EXISTS experiment_leases (experiment_id INTEGER PRIMARY KEY REFERENCES experiments (id)"
    " ON DELETE CASCADE, host TEXT NOT NULL, pid INTEGER NOT NULL, started_at TEXT NOT NULL,"
    " heartbeat_at TEXT NOT NULL)",
    // Branching repair (`branch` > 1): every sibling reply of a branched round
    // with its candidate and verdict (the evaluation columns are NULL until it
    // is judged); the chosen one is also the round's turn.
    "CREATE TABLE IF NOT EXISTS branch_replies (id INTEGER PRIMARY KEY, trajectory_id INTEGER NOT NULL"
    " REFERENCES trajectories (id) ON DELETE CASCADE, round INTEGER NOT NULL CHECK (round >= 0),"
    " branch INTEGER NOT NULL CHECK (branch >= 0), chosen INTEGER NOT NULL DEFAULT 0 CHECK (chosen IN (0, 1)),"
    " judge_attempts INTEGER NOT NULL DEFAULT 0, messages TEXT NOT NULL, feedback TEXT NOT NULL,"
    " feedback_detail TEXT NOT NULL, reply TEXT NOT NULL, reasoning TEXT NOT NULL, finish_reason TEXT NOT NULL,"
    " model TEXT NOT NULL, author TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,"
    " reasoning_tokens INTEGER NOT NULL, latency_ms REAL NOT NULL, created_at TEXT NOT NULL, ptx TEXT NOT NULL,"
    " manifest TEXT NOT NULL, format_problem TEXT NOT NULL, normalised_hash TEXT NOT NULL, evaluator_version TEXT,"
    " gpu TEXT, verdict TEXT, passed INTEGER, correct INTEGER, instructions_ok INTEGER, speedup REAL, result TEXT,"
    " evaluated_at TEXT, UNIQUE (trajectory_id, round, branch))",
    // Containment: how often judging a candidate (a round's, or a sibling of
    // a branched round) ended the process with a crash of its own making, so
    // that one is not judged forever. A process killed from outside (SIGKILL,
    // a preemption) counts nothing here. Replaces judge_attempts and
    // branch_replies.judge_attempts, which counted every start and so charged
    // candidates with kills; those are no longer read or written.
    "CREATE TABLE IF NOT EXISTS judge_crashes (subject TEXT NOT NULL CHECK (subject IN ('candidate',"
    " 'branch_reply')), subject_id INTEGER NOT NULL, crashes INTEGER NOT NULL, last_signal TEXT NOT NULL,"
    " last_at TEXT NOT NULL, PRIMARY KEY (subject, subject_id))",
};

bool has_column(connection& db, const std::string& table, const std::string& column) {
  statement info = db.query("SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2");
  info.bind(1, table);
  info.bind(2, column);
  return info.step() && info.int64_at(0) > 0;
}

// Indexes over added columns: created after the columns exist.
constexpr const char* k_added_indexes[] = {
    // Near-duplicate lookup on every candidate write.
    "CREATE INDEX IF NOT EXISTS candidates_by_hash ON candidates (normalised_hash)",
};

void add_missing_columns(connection& db) {
  for (const char* sql : k_added_tables) db.exec(sql);
  for (const auto& c : k_added_columns) {
    if (has_column(db, c.table, c.column)) continue;
    const std::string alter = std::string("ALTER TABLE ") + c.table + " ADD COLUMN " + c.column + " " + c.declaration;
    db.exec(alter.c_str());
    statement note = db.query("INSERT OR REPLACE INTO schema_changes (name, applied_at) VALUES (?1, ?2)");
    note.bind(1, std::string(c.table) + "." + c.column);
    note.bind(2, utc_now_iso8601());
    note.run();
  }
  for (const char* sql : k_added_indexes) db.exec(sql);
}

// The stored schema version, or nullopt when meta has none. Throws store_error
// naming the file when the meta table itself is missing.
std::optional<int> stored_version(connection& db) {
  statement exists = db.query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  if (!exists.step() || exists.int64_at(0) == 0) return std::nullopt;
  statement version = db.query("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version.step()) return std::nullopt;
  const std::string text = version.text_at(0);
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw not_a_run_database(describe(db.file(), "meta.schema_version is '" + text + "', not a number"));
  }
}

void require_known_version(const connection& db, int version) {
  if (version > k_schema_version)
    throw not_a_run_database(describe(db.file(), "schema version " + std::to_string(version) +
                                              " is newer than this ptxbench reads (" +
                                              std::to_string(k_schema_version) + ")"));
}

}  // namespace

void apply_schema(connection& db) {
  write_transaction tx(db);
  const std::optional<int> version = stored_version(db);
  if (version) {
    require_known_version(db, *version);
  } else {
    // Tables but no version: another program's database, whose tables of the
    // same name would not have our columns.
    statement tables = db.query("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    if (tables.step() && tables.int64_at(0) > 0)
      throw not_a_run_database(describe(db.file(), "not a ptxbench run database (tables but no meta.schema_version)"));
  }
  db.exec(k_schema_sql);
  add_missing_columns(db);
  if (!version) {
    statement put = db.query("INSERT INTO meta (key, value) VALUES ('schema_version', ?1), ('application', 'ptxbench'),"
                             " ('created_at', ?2)");
    put.bind(1, std::to_string(k_schema_version));
    put.bind(2, utc_now_iso8601());
    put.run();
  }
  tx.commit();
}

void check_schema(connection& db) {
  const std::optional<int> version = stored_version(db);
  if (!version) throw not_a_run_database(describe(db.file(), "not a ptxbench run database (no meta.schema_version)"));
  require_known_version(db, *version);
}

}  // namespace ptxbench::store_detail
