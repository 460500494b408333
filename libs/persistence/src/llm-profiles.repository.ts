import type { Insertable, Selectable } from 'kysely';
import type { Executor } from './database';
import type { LlmProfilesTable } from './tables';

export type LlmProfileRow = Selectable<LlmProfilesTable>;

/** Named queries for LLM profiles (spec 2). Issue 6 adds the route queries. */
export const llmProfilesRepository = {
  async insert(db: Executor, row: Insertable<LlmProfilesTable>): Promise<LlmProfileRow> {
    return db.insertInto('llm_profiles').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * A profile of the account that is not deleted (it may be `disabled`: the caller decides what that
   * means); undefined for a missing, deleted or other-account id.
   */
  async findUsableProfile(db: Executor, accountId: string, id: string): Promise<LlmProfileRow | undefined> {
    return db
      .selectFrom('llm_profiles')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('status', '!=', 'deleted')
      .executeTakeFirst();
  },

  /** Moves a profile to `active`, `disabled` or `deleted` (soft delete sets deleted_at). */
  async setStatus(
    db: Executor,
    id: string,
    status: LlmProfileRow['status'],
    now = Date.now(),
  ): Promise<void> {
    await db
      .updateTable('llm_profiles')
      .set({ status, deleted_at: status === 'deleted' ? now : null, updated_at: now })
      .where('id', '=', id)
      .execute();
  },
};
