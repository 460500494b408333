import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { SessionsTable, TemporaryConversationsTable } from './tables';

export type TemporaryConversationRow = Selectable<TemporaryConversationsTable>;
export type NewTemporaryConversationRow = Insertable<TemporaryConversationsTable>;

/** The terminal moves of an active conversation, with the column each one sets. */
export type TemporaryTerminalStatus = 'finalized' | 'discarded' | 'cancelled' | 'expired';
const TERMINAL_COLUMN = {
  finalized: 'finalized_at',
  discarded: 'discarded_at',
  cancelled: 'cancelled_at',
  expired: 'expired_at',
} as const;

/**
 * Named queries for temporary conversations (migration 20261127110000). A conversation is a session
 * of kind `temporary` plus its `temporary_conversations` row; access is decided by ProjectAccess on
 * its Project. State moves are conditional updates (`WHERE status = 'active'`), so concurrent moves
 * and the lazy expiry agree on one outcome.
 */
export const temporaryConversationsRepository = {
  async insert(tx: Tx, row: NewTemporaryConversationRow): Promise<TemporaryConversationRow> {
    return tx.insertInto('temporary_conversations').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async find(db: Executor, sessionId: string): Promise<TemporaryConversationRow | undefined> {
    return db
      .selectFrom('temporary_conversations')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
  },

  /**
   * The conversation's status under a share lock held until the transaction ends: a terminal move
   * (an update of the row) waits for the transaction, or the read waits for the move and sees it.
   */
  async statusForShare(tx: Tx, sessionId: string): Promise<string | undefined> {
    const row = await tx
      .selectFrom('temporary_conversations')
      .select('status')
      .where('session_id', '=', sessionId)
      .forShare()
      .executeTakeFirst();
    return row?.status;
  },

  /** The conversation row locked until the transaction ends (appends and terminal moves take turns). */
  async lock(tx: Tx, sessionId: string): Promise<TemporaryConversationRow | undefined> {
    return tx
      .selectFrom('temporary_conversations')
      .selectAll()
      .where('session_id', '=', sessionId)
      .forUpdate()
      .executeTakeFirst();
  },

  /** The conversation's session row (kind `temporary`); normal session reads never return it. */
  async findSession(db: Executor, sessionId: string): Promise<Selectable<SessionsTable> | undefined> {
    return db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .where('kind', '=', 'temporary')
      .executeTakeFirst();
  },

  /** `active` → `expired` when a `ttl` conversation's `expires_at` has passed; undefined otherwise. */
  async expireIfDue(
    db: Executor,
    sessionId: string,
    now: number,
  ): Promise<TemporaryConversationRow | undefined> {
    return db
      .updateTable('temporary_conversations')
      .set({ status: 'expired', expired_at: now, updated_at: now })
      .where('session_id', '=', sessionId)
      .where('status', '=', 'active')
      .where('expires_at', '<=', now)
      .returningAll()
      .executeTakeFirst();
  },

  /** The maintenance expiry: up to `limit` due conversations move to `expired`; returns them. */
  async expireDue(db: Executor, now: number, limit: number): Promise<TemporaryConversationRow[]> {
    return db
      .updateTable('temporary_conversations')
      .set({ status: 'expired', expired_at: now, updated_at: now })
      .where('session_id', 'in', (eb) =>
        eb
          .selectFrom('temporary_conversations')
          .select('session_id')
          .where('status', '=', 'active')
          .where('expires_at', '<=', now)
          .orderBy('expires_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .where('status', '=', 'active')
      .returningAll()
      .execute();
  },

  /** `active` → a terminal status with its `*_at`; undefined when the conversation was not active. */
  async moveToTerminal(
    db: Executor,
    sessionId: string,
    status: TemporaryTerminalStatus,
    now: number,
  ): Promise<TemporaryConversationRow | undefined> {
    return db
      .updateTable('temporary_conversations')
      .set({ status, [TERMINAL_COLUMN[status]]: now, updated_at: now, last_activity_at: now })
      .where('session_id', '=', sessionId)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst();
  },

  /** Records activity (an append or a turn) on a still-active conversation. */
  async touch(db: Executor, sessionId: string, now: number): Promise<void> {
    await db
      .updateTable('temporary_conversations')
      .set({ last_activity_at: now, updated_at: now })
      .where('session_id', '=', sessionId)
      .where('status', '=', 'active')
      .execute();
  },

  /**
   * Terminal conversations whose bodies are due for cleanup: policy `delete_on_finalize` or `ttl`, not
   * cleaned yet, terminal time at or before `cutoff`. Locked (others skipped) until the transaction ends.
   */
  async lockCleanupDue(tx: Tx, cutoff: number, limit: number): Promise<TemporaryConversationRow[]> {
    return tx
      .selectFrom('temporary_conversations')
      .selectAll()
      .where('status', '<>', 'active')
      .where('cleaned_at', 'is', null)
      .where('retention_policy', 'in', ['delete_on_finalize', 'ttl'])
      .where((eb) =>
        eb(eb.fn.coalesce('finalized_at', 'discarded_at', 'cancelled_at', 'expired_at'), '<=', cutoff),
      )
      .orderBy('updated_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
  },

  /**
   * Empties the bodies of the given conversations: message contents, floor reasoning, the text their
   * runs kept (pending text, stored run events) and the prompts their floors were generated from
   * (`floor_prompt_snapshots`, which copy the messages); rows, structure and timestamps stay. Returns
   * the counts.
   */
  async cleanBodies(
    tx: Tx,
    sessionIds: string[],
    now: number,
  ): Promise<{ messages: number; floors: number; runs: number; prompt_snapshots: number }> {
    if (sessionIds.length === 0) return { messages: 0, floors: 0, runs: 0, prompt_snapshots: 0 };
    const messages = await tx
      .updateTable('messages')
      .set({ content: '' })
      .where('session_id', 'in', sessionIds)
      .executeTakeFirst();
    const floors = await tx
      .updateTable('floors')
      .set({ reasoning_text: null })
      .where('session_id', 'in', sessionIds)
      .executeTakeFirst();
    const runs = await tx
      .updateTable('generation_runs')
      .set({ pending_text: '', pending_reasoning: null })
      .where('session_id', 'in', sessionIds)
      .executeTakeFirst();
    await tx
      .deleteFrom('generation_run_events')
      .where('run_id', 'in', (eb) =>
        eb.selectFrom('generation_runs').select('id').where('session_id', 'in', sessionIds),
      )
      .execute();
    const snapshots = await tx
      .deleteFrom('floor_prompt_snapshots')
      .where('session_id', 'in', sessionIds)
      .executeTakeFirst();
    await tx
      .updateTable('temporary_conversations')
      .set({ cleaned_at: now, updated_at: now })
      .where('session_id', 'in', sessionIds)
      .execute();
    return {
      messages: Number(messages.numUpdatedRows),
      floors: Number(floors.numUpdatedRows),
      runs: Number(runs.numUpdatedRows),
      prompt_snapshots: Number(snapshots.numDeletedRows),
    };
  },

  /** The newest committed `output` page (active) of the conversation's branch `main`, or undefined. */
  async latestOutputPage(
    db: Executor,
    sessionId: string,
  ): Promise<{ page_id: string; floor_id: string } | undefined> {
    return db
      .selectFrom('pages')
      .innerJoin('floors', 'floors.id', 'pages.floor_id')
      .select(['pages.id as page_id', 'floors.id as floor_id'])
      .where('pages.session_id', '=', sessionId)
      .where('pages.page_kind', '=', 'output')
      .where('pages.is_active', '=', true)
      .where('floors.state', '=', 'committed')
      .orderBy('floors.floor_no', 'desc')
      .orderBy('pages.created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  },
};
