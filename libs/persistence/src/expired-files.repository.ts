import { sql } from 'kysely';
import type { Executor } from './database';

/** The tables of downloadable files that expire (`CHAT_EXPORT_ARTIFACT_TTL_MS`). */
export type ExpiringFileTable = 'chat_transfer_artifacts' | 'backup_artifacts';

/** The maintenance purge of expired export files (chat exports, backups). */
export const expiredFilesRepository = {
  /**
   * Deletes up to `limit` files of `table` whose expiry has passed, oldest first, skipping rows another
   * worker is deleting; their jobs stay (the download answers 410 from the job). Returns how many went.
   */
  async deleteExpired(db: Executor, table: ExpiringFileTable, now: number, limit: number): Promise<number> {
    const result = await sql`
      DELETE FROM ${sql.table(table)} WHERE job_id IN (
        SELECT job_id FROM ${sql.table(table)} WHERE expires_at < ${now} ORDER BY expires_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  },
};
