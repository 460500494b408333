import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { SessionPromptSettingsTable } from './tables';

export type SessionPromptSettingsRow = Selectable<SessionPromptSettingsTable>;

/**
 * Named queries of a session's prompt settings (db/migrations/20261122140000_session_prompt_settings.ts;
 * docs/decisions.md "Prompt settings"). Callers have checked access to the session.
 */
export const sessionPromptSettingsRepository = {
  async find(db: Executor, sessionId: string): Promise<SessionPromptSettingsRow | undefined> {
    return db
      .selectFrom('session_prompt_settings')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
  },

  async insert(tx: Tx, row: Insertable<SessionPromptSettingsTable>): Promise<SessionPromptSettingsRow> {
    return tx.insertInto('session_prompt_settings').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async update(
    tx: Tx,
    sessionId: string,
    changes: Updateable<SessionPromptSettingsTable>,
  ): Promise<SessionPromptSettingsRow> {
    return tx
      .updateTable('session_prompt_settings')
      .set(changes)
      .where('session_id', '=', sessionId)
      .returningAll()
      .executeTakeFirstOrThrow();
  },
};
