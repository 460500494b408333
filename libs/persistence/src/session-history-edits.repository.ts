import { sql } from 'kysely';
import type { Executor } from './database';

export interface PrunedHistoryEdits {
  /** Sessions whose rows were replaced by one new row. */
  sessions: number;
  /** Sessions that no longer exist, whose rows were deleted. */
  orphaned: number;
  /** Rows deleted. */
  deleted: number;
}

/**
 * `session_history_edits` (migration 20261122150000, docs/decisions.md "Turn history cache"): a
 * session's history revision is read from its latest rows (turn-state.repository.ts).
 */
export const sessionHistoryEditsRepository = {
  /**
   * Up to `limit` sessions with more than one row (oldest first) get their rows replaced by one new
   * row, and the rows of up to as many deleted sessions are deleted. The new row has the largest id
   * the session ever had, so its revision is new and never equal to one it had before (a turn then
   * reads its history once more). Rows another transaction holds are skipped (several workers can
   * run this at once; a session left with more than one row is pruned by the next scan); rows of
   * transactions not yet committed are invisible here and stay, and still change the revision when
   * they commit.
   */
  async pruneUnneeded(db: Executor, limit: number): Promise<PrunedHistoryEdits> {
    const result = await sql<PrunedHistoryEdits>`
      WITH crowded AS (
        SELECT e.session_id FROM session_history_edits e
        GROUP BY e.session_id
        HAVING count(*) > 1 OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = e.session_id)
        ORDER BY min(e.edit_id)
        LIMIT ${limit}
      ),
      doomed AS (
        SELECT e.edit_id FROM session_history_edits e JOIN crowded c ON c.session_id = e.session_id
        FOR UPDATE OF e SKIP LOCKED
      ),
      gone AS (
        DELETE FROM session_history_edits d USING doomed
        WHERE d.edit_id = doomed.edit_id
        RETURNING d.session_id, NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = d.session_id) AS orphaned
      ),
      marked AS (
        INSERT INTO session_history_edits (session_id)
        SELECT DISTINCT gone.session_id FROM gone WHERE NOT gone.orphaned
        RETURNING session_id
      )
      SELECT
        (SELECT count(*) FROM marked)::int AS sessions,
        (SELECT count(DISTINCT session_id) FROM gone WHERE orphaned)::int AS orphaned,
        (SELECT count(*) FROM gone)::int AS deleted`.execute(db);
    return result.rows[0];
  },
};
