import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { MessageRow } from './conversation.repository';
import type { FloorRow } from './floors.repository';
import type {
  GenerationRunEventRow,
  GenerationRunEventsTable,
  GenerationRunRow,
  GenerationRunsTable,
} from './tables';

/** Named queries of generation runs and their replayable events (docs/decisions.md "Turns and runs"). */
export const generationRunsRepository = {
  /** Lock waits in this transaction give up after `ms` (SQLSTATE 55P03; a turn's commit answers 503 `commit_busy`). */
  async setLockTimeout(tx: Tx, ms: number): Promise<void> {
    await sql.raw(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(ms))}`).execute(tx);
  },

  /** Inserts a running run; the partial unique index refuses a second running run on the branch. */
  async insert(db: Executor, row: Insertable<GenerationRunsTable>): Promise<GenerationRunRow> {
    return db.insertInto('generation_runs').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async find(db: Executor, runId: string): Promise<GenerationRunRow | undefined> {
    return db.selectFrom('generation_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  },

  async findRunningOfBranch(db: Executor, branchId: string): Promise<GenerationRunRow | undefined> {
    return db
      .selectFrom('generation_runs')
      .selectAll()
      .where('branch_id', '=', branchId)
      .where('status', '=', 'running')
      .executeTakeFirst();
  },

  /** Updates a run only while it is still running (the conditional step of a commit or a failure). */
  async updateRunning(
    db: Executor,
    runId: string,
    patch: Updateable<GenerationRunsTable>,
  ): Promise<GenerationRunRow | undefined> {
    return db
      .updateTable('generation_runs')
      .set(patch)
      .where('id', '=', runId)
      .where('status', '=', 'running')
      .returningAll()
      .executeTakeFirst();
  },

  /** Takes over a run whose lease expired (its process is gone): true when this call ended it. */
  async expireStale(tx: Tx, runId: string, now: number): Promise<GenerationRunRow | undefined> {
    return tx
      .updateTable('generation_runs')
      .set({
        status: 'failed',
        phase: 'failed',
        error: JSON.stringify({
          code: 'generation_abandoned',
          message: 'The process running this generation stopped',
        }),
        updated_at: now,
        completed_at: now,
      })
      .where('id', '=', runId)
      .where('status', '=', 'running')
      .where('lease_expires_at', '<', now)
      .returningAll()
      .executeTakeFirst();
  },

  /** Extends the leases of the given running runs (the owning process's heartbeat). */
  async renewLeases(db: Executor, runIds: string[], leaseExpiresAt: number): Promise<void> {
    if (runIds.length === 0) return;
    await db
      .updateTable('generation_runs')
      .set({ lease_expires_at: leaseExpiresAt })
      .where('id', 'in', runIds)
      .where('status', '=', 'running')
      .execute();
  },

  async appendEvents(db: Executor, rows: Array<Insertable<GenerationRunEventsTable>>): Promise<void> {
    if (rows.length === 0) return;
    await db.insertInto('generation_run_events').values(rows).execute();
  },

  /** Events after `afterSeq`, in order, at most `limit`. */
  async eventsAfter(
    db: Executor,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<GenerationRunEventRow[]> {
    return db
      .selectFrom('generation_run_events')
      .selectAll()
      .where('run_id', '=', runId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  },

  /** A message by id (edit-and-regenerate's target). */
  async findMessage(db: Executor, messageId: string): Promise<MessageRow | undefined> {
    return db.selectFrom('messages').selectAll().where('id', '=', messageId).executeTakeFirst();
  },

  /**
   * A retry's generation figures on its committed floor (the new active output page's usage and
   * reasoning); only while the floor is committed and not superseded, else nothing is updated.
   */
  async updateRetriedFloor(
    tx: Tx,
    floorId: string,
    patch: { token_in: number; token_out: number; reasoning_text: string | null; state_snapshot?: string },
    now: number,
  ): Promise<FloorRow | undefined> {
    return tx
      .updateTable('floors')
      .set({ ...patch, updated_at: now })
      .where('id', '=', floorId)
      .where('state', '=', 'committed')
      .where('superseded_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  },
};
