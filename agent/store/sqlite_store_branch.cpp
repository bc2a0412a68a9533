// Branching repair (`branch` > 1): the siblings of a round in branch_replies,
// their verdicts, and the choice of the one that continues the trajectory.
// Each writer is one transaction, so a process killed at any moment leaves
// every sibling whole (with or without its verdict) and a round either chosen
// (turn, candidate, evaluation and chosen flag) or not at all.
#include "agent/store/ptx_fingerprint.hpp"
#include "agent/store/sqlite_store.hpp"
#include "agent/store/store_rows.hpp"

namespace ptxbench::store_detail {

namespace {

#define PTXBENCH_BRANCH_COLUMNS                                                                          \
  "b.id, b.trajectory_id, b.round, b.branch, b.chosen, b.messages, b.feedback, "                        \
  "b.feedback_detail, b.reply, b.reasoning, b.finish_reason, b.model, b.author, b.prompt_tokens, "      \
  "b.completion_tokens, b.reasoning_tokens, b.latency_ms, b.created_at, b.ptx, b.manifest, "           \
  "b.format_problem, b.normalised_hash, b.evaluator_version, b.gpu, b.verdict, b.passed, b.correct, " \
  "b.instructions_ok, b.speedup, b.result, b.evaluated_at"

nlohmann::json parse_json_column(const connection& db, const statement& s, int column, const char* what, int64_t id) {
  const std::string text = s.text_at(column);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw store_error(describe(db.file(), std::string("branch_replies.") + what + " of row " + std::to_string(id) +
                                              " is not valid JSON: " + e.what()));
  }
}

branch_reply_row read_branch_reply(const connection& db, const statement& s) {
  branch_reply_row b;
  b.id = s.int64_at(0);
  b.turn.trajectory_id = s.int64_at(1);
  b.turn.round = s.int_at(2);
  b.branch = s.int_at(3);
  b.chosen = s.bool_at(4);
  b.turn.messages = parse_json_column(db, s, 5, "messages", b.id);
  b.turn.feedback = s.text_at(6);
  b.turn.feedback_detail = s.text_at(7);
  b.turn.reply = s.text_at(8);
  b.turn.reasoning = s.text_at(9);
  b.turn.finish_reason = s.text_at(10);
  b.turn.model = s.text_at(11);
  b.turn.author = s.text_at(12);
  b.turn.prompt_tokens = s.int_at(13);
  b.turn.completion_tokens = s.int_at(14);
  b.turn.reasoning_tokens = s.int_at(15);
  b.turn.latency_ms = s.double_at(16);
  b.turn.created_at = s.text_at(17);
  b.candidate.ptx = s.text_at(18);
  b.candidate.manifest = s.text_at(19);
  b.candidate.format_problem = s.text_at(20);
  b.candidate.normalised_hash = s.text_at(21);
  if (!s.is_null(29)) {
    evaluation_row e;
    e.evaluator_version = s.text_at(22);
    e.gpu = s.text_at(23);
    e.verdict = s.text_at(24);
    e.passed = s.bool_at(25);
    e.correct = s.bool_at(26);
    e.instructions_ok = s.bool_at(27);
    e.speedup = s.optional_double_at(28);
    e.result = parse_json_column(db, s, 29, "result", b.id);
    e.created_at = s.text_at(30);
    b.evaluation = std::move(e);
  }
  return b;
}

}  // namespace

void sqlite_store::fill_branch_evaluation_locked(int64_t branch_reply_id, const evaluation_row& e) {
  statement update = m_db.query(
      "UPDATE branch_replies SET evaluator_version = ?1, gpu = ?2, verdict = ?3, passed = ?4, correct = ?5,"
      " instructions_ok = ?6, speedup = ?7, result = ?8, evaluated_at = ?9 WHERE id = ?10 AND result IS NULL");
  update.bind(1, e.evaluator_version);
  update.bind(2, e.gpu);
  update.bind(3, e.verdict);
  update.bind(4, e.passed);
  update.bind(5, e.correct);
  update.bind(6, e.instructions_ok);
  update.bind(7, e.speedup);
  update.bind(8, json_text(e.result));
  update.bind(9, or_now(e.created_at));
  update.bind(10, branch_reply_id);
  update.run();
}

int64_t sqlite_store::record_branch_reply(const branch_reply_row& b) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  std::optional<int64_t> id;
  {
    statement existing =
        m_db.query("SELECT id FROM branch_replies WHERE trajectory_id = ?1 AND round = ?2 AND branch = ?3");
    existing.bind(1, b.turn.trajectory_id);
    existing.bind(2, b.turn.round);
    existing.bind(3, b.branch);
    if (existing.step()) id = existing.int64_at(0);
  }
  if (!id) {
    statement insert = m_db.query(
        "INSERT INTO branch_replies (trajectory_id, round, branch, chosen, messages, feedback,"
        " feedback_detail, reply, reasoning, finish_reason, model, author, prompt_tokens, completion_tokens,"
        " reasoning_tokens, latency_ms, created_at, ptx, manifest, format_problem, normalised_hash)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)");
    insert.bind(1, b.turn.trajectory_id);
    insert.bind(2, b.turn.round);
    insert.bind(3, b.branch);
    insert.bind(4, false);  // set below, with the evaluation it needs
    insert.bind(5, json_text(b.turn.messages));
    insert.bind(6, b.turn.feedback);
    insert.bind(7, b.turn.feedback_detail);
    insert.bind(8, b.turn.reply);
    insert.bind(9, b.turn.reasoning);
    insert.bind(10, b.turn.finish_reason);
    insert.bind(11, b.turn.model);
    insert.bind(12, b.turn.author);
    insert.bind(13, b.turn.prompt_tokens);
    insert.bind(14, b.turn.completion_tokens);
    insert.bind(15, b.turn.reasoning_tokens);
    insert.bind(16, b.turn.latency_ms);
    insert.bind(17, or_now(b.turn.created_at));
    insert.bind(18, b.candidate.ptx);
    insert.bind(19, b.candidate.manifest);
    insert.bind(20, b.candidate.format_problem);
    insert.bind(21, candidate_fingerprint(b.candidate.ptx, b.candidate.manifest));
    insert.run();
    id = m_db.last_insert_id();
  }
  if (b.evaluation) fill_branch_evaluation_locked(*id, *b.evaluation);
  if (b.chosen) {
    statement mark = m_db.query("UPDATE branch_replies SET chosen = 1 WHERE id = ?1");
    mark.bind(1, *id);
    mark.run();
  }
  tx.commit();
  return *id;
}

void sqlite_store::record_branch_evaluation(int64_t branch_reply_id, const evaluation_row& e) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  fill_branch_evaluation_locked(branch_reply_id, e);
  tx.commit();
}

int64_t sqlite_store::choose_branch(int64_t trajectory_id, int round, int branch) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  std::optional<branch_reply_row> sibling;
  {
    statement select = m_db.query("SELECT " PTXBENCH_BRANCH_COLUMNS
                                  " FROM branch_replies b WHERE b.trajectory_id = ?1 AND b.round = ?2 AND b.branch = ?3");
    select.bind(1, trajectory_id);
    select.bind(2, round);
    select.bind(3, branch);
    if (select.step()) sibling = read_branch_reply(m_db, select);
  }
  const std::string where = "trajectory " + std::to_string(trajectory_id) + " round " + std::to_string(round) +
                            " branch " + std::to_string(branch);
  if (!sibling) throw store_error(describe(m_db.file(), "no sibling reply for " + where));
  if (!sibling->evaluation) throw store_error(describe(m_db.file(), "the sibling reply for " + where + " is not judged"));
  bool inserted = false;
  int64_t candidate_id = 0;
  const int64_t turn_id = insert_turn_locked(sibling->turn, sibling->candidate, &inserted, &candidate_id);
  if (!inserted) return turn_id;  // chosen before: tx rolls back, nothing written
  evaluation_row e = *sibling->evaluation;
  e.candidate_id = candidate_id;
  insert_evaluation_locked(e);
  {
    statement mark = m_db.query(
        "UPDATE branch_replies SET chosen = (branch = ?3) WHERE trajectory_id = ?1 AND round = ?2");
    mark.bind(1, trajectory_id);
    mark.bind(2, round);
    mark.bind(3, branch);
    mark.run();
  }
  tx.commit();
  return turn_id;
}

std::vector<branch_reply_row> sqlite_store::branch_replies(int64_t trajectory_id) {
  std::lock_guard lock(m_mutex);
  std::vector<branch_reply_row> rows;
  if (!table_exists(m_db, "branch_replies")) return rows;  // a read-only open of an older file
  statement select = m_db.query("SELECT " PTXBENCH_BRANCH_COLUMNS
                                " FROM branch_replies b WHERE b.trajectory_id = ?1 ORDER BY b.round, b.branch");
  select.bind(1, trajectory_id);
  while (select.step()) rows.push_back(read_branch_reply(m_db, select));
  return rows;
}

}  // namespace ptxbench::store_detail
