import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor } from './database';
import type { JobStatus, JobsTable } from './tables';

export type JobRow = Selectable<JobsTable>;
export type NewJobRow = Omit<Insertable<JobsTable>, 'status' | 'attempt_count' | 'lease_expires_at'>;

export interface JobErrorFields {
  last_error: string;
  last_error_code: string | null;
  last_error_class: string;
}

/** States a worker may claim from (the first two when due, the last two when their lease expired). */
export const CLAIMABLE_STATUSES: JobStatus[] = ['pending', 'retry_waiting'];
export const IN_FLIGHT_STATUSES: JobStatus[] = ['leased', 'running'];
export const UNFINISHED_STATUSES: JobStatus[] = ['pending', 'leased', 'running', 'retry_waiting'];

/**
 * An update of the attempt that still holds a running job: the attempt number is the fencing token, so
 * a worker whose lease was taken over changes nothing.
 */
const updateHeldAttempt = (db: Executor, id: string, attempt: number, values: Updateable<JobsTable>) =>
  db
    .updateTable('jobs')
    .set(values)
    .where('id', '=', id)
    .where('status', '=', 'running')
    .where('attempt_count', '=', attempt);

/**
 * The job ledger: Postgres rows are the truth of every job. State moves only by conditional
 * updates (`WHERE status IN (...)`, and the attempt number as a fencing token while in flight), so
 * a duplicate delivery, a cancelled job or a worker whose lease was taken over changes nothing.
 */
export const jobsRepository = {
  /** Inserts a `pending` row; with a `dedupe_key` already taken, inserts nothing and returns undefined. */
  async insertPending(db: Executor, row: NewJobRow): Promise<JobRow | undefined> {
    return db
      .insertInto('jobs')
      .values({ ...row, status: 'pending', attempt_count: 0, lease_expires_at: null })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returningAll()
      .executeTakeFirst();
  },

  async findById(db: Executor, id: string): Promise<JobRow | undefined> {
    return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  },

  async findByDedupeKey(db: Executor, dedupeKey: string): Promise<JobRow | undefined> {
    return db.selectFrom('jobs').selectAll().where('dedupe_key', '=', dedupeKey).executeTakeFirst();
  },

  /**
   * Claims a job for one attempt: `pending`/`retry_waiting` when due, or `leased`/`running` whose
   * lease has expired (its worker is gone) while attempts remain. Counts the attempt and sets the
   * lease. Undefined when the job is not claimable (finished, cancelled, running elsewhere, not due,
   * an expired lease on the last attempt: deadLetterSpentLease).
   */
  async claim(
    db: Executor,
    input: { id: string; name: string; now: number; leaseMs: number },
  ): Promise<JobRow | undefined> {
    return db
      .updateTable('jobs')
      .set((eb) => ({
        status: 'running',
        attempt_count: eb('attempt_count', '+', 1),
        started_at: input.now,
        finished_at: null,
        lease_expires_at: input.now + input.leaseMs,
        updated_at: input.now,
      }))
      .where('id', '=', input.id)
      .where('name', '=', input.name)
      .where((eb) =>
        eb.or([
          eb.and([
            eb('status', 'in', CLAIMABLE_STATUSES),
            eb.or([eb('available_at', 'is', null), eb('available_at', '<=', input.now)]),
          ]),
          eb.and([
            eb('status', 'in', IN_FLIGHT_STATUSES),
            eb('lease_expires_at', '<', input.now),
            eb('attempt_count', '<', eb.ref('max_attempts')),
          ]),
        ]),
      )
      .returningAll()
      .executeTakeFirst();
  },

  /**
   * An in-flight job whose lease expired on its last attempt goes to `dead_letter` (as
   * returnExpiredLeases does), when a delivery finds it: the queue redelivers a dead worker's entry,
   * the ledger decides. Undefined when the row is not such a job.
   */
  async deadLetterSpentLease(db: Executor, input: { id: string; now: number }): Promise<JobRow | undefined> {
    return db
      .updateTable('jobs')
      .set({
        status: 'dead_letter',
        available_at: input.now,
        finished_at: input.now,
        lease_expires_at: null,
        last_error: 'The worker did not finish or renew the job before its lease expired',
        last_error_code: 'job_lease_expired',
        last_error_class: 'uncertain',
        updated_at: input.now,
      })
      .where('id', '=', input.id)
      .where('status', 'in', IN_FLIGHT_STATUSES)
      .where('lease_expires_at', '<', input.now)
      .where((eb) => eb('attempt_count', '>=', eb.ref('max_attempts')))
      .returningAll()
      .executeTakeFirst();
  },

  /** Extends the lease of the attempt still holding the job; false when it no longer does. */
  async renewLease(
    db: Executor,
    input: { id: string; attempt: number; until: number; now: number },
  ): Promise<boolean> {
    const result = await updateHeldAttempt(db, input.id, input.attempt, {
      lease_expires_at: input.until,
      updated_at: input.now,
    }).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async markSucceeded(
    db: Executor,
    input: { id: string; attempt: number; result: unknown; now: number },
  ): Promise<JobRow | undefined> {
    return updateHeldAttempt(db, input.id, input.attempt, {
      status: 'succeeded',
      result: input.result === undefined || input.result === null ? null : JSON.stringify(input.result),
      finished_at: input.now,
      lease_expires_at: null,
      updated_at: input.now,
    })
      .returningAll()
      .executeTakeFirst();
  },

  async markRetryWaiting(
    db: Executor,
    input: { id: string; attempt: number; availableAt: number; error: JobErrorFields; now: number },
  ): Promise<JobRow | undefined> {
    return updateHeldAttempt(db, input.id, input.attempt, {
      status: 'retry_waiting',
      available_at: input.availableAt,
      lease_expires_at: null,
      updated_at: input.now,
      ...input.error,
    })
      .returningAll()
      .executeTakeFirst();
  },

  async markDeadLetter(
    db: Executor,
    input: { id: string; attempt: number; error: JobErrorFields; now: number },
  ): Promise<JobRow | undefined> {
    return updateHeldAttempt(db, input.id, input.attempt, {
      status: 'dead_letter',
      finished_at: input.now,
      lease_expires_at: null,
      updated_at: input.now,
      ...input.error,
    })
      .returningAll()
      .executeTakeFirst();
  },

  /** A worker shutting down hands its attempt back: due again at once, the attempt stays counted. */
  async handBack(db: Executor, input: { id: string; attempt: number; now: number }): Promise<boolean> {
    const result = await updateHeldAttempt(db, input.id, input.attempt, {
      status: 'retry_waiting',
      available_at: input.now,
      lease_expires_at: null,
      updated_at: input.now,
    }).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Cancels a job that has not started (spec 1: `pending` and `retry_waiting` only). */
  async cancel(db: Executor, input: { id: string; now: number }): Promise<JobRow | undefined> {
    return db
      .updateTable('jobs')
      .set({ status: 'cancelled', finished_at: input.now, lease_expires_at: null, updated_at: input.now })
      .where('id', '=', input.id)
      .where('status', 'in', CLAIMABLE_STATUSES)
      .returningAll()
      .executeTakeFirst();
  },

  /**
   * Returns in-flight jobs whose lease expired: to `retry_waiting` (due now) or, when their
   * attempts are spent, to `dead_letter`.
   */
  async returnExpiredLeases(
    db: Executor,
    now: number,
  ): Promise<Array<Pick<JobRow, 'id' | 'name' | 'status'>>> {
    const result = await sql<Pick<JobRow, 'id' | 'name' | 'status'>>`
      UPDATE jobs SET
        status = CASE WHEN attempt_count >= max_attempts THEN 'dead_letter' ELSE 'retry_waiting' END,
        available_at = ${now},
        finished_at = CASE WHEN attempt_count >= max_attempts THEN ${now} ELSE finished_at END,
        lease_expires_at = NULL,
        last_error = 'The worker did not finish or renew the job before its lease expired',
        last_error_code = 'job_lease_expired',
        last_error_class = 'uncertain',
        updated_at = ${now}
      WHERE status IN ('leased', 'running') AND lease_expires_at < ${now}
      RETURNING id, name, status
    `.execute(db);
    return result.rows;
  },

  /** `pending` rows and due `retry_waiting` rows, oldest first: what the queue should be holding. */
  async listDispatchable(
    db: Executor,
    input: { now: number; limit: number; names: string[] },
  ): Promise<Array<Pick<JobRow, 'id' | 'name' | 'status'>>> {
    if (input.names.length === 0) return [];
    return db
      .selectFrom('jobs')
      .select(['id', 'name', 'status'])
      .where('name', 'in', input.names)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'pending'),
          eb.and([
            eb('status', '=', 'retry_waiting'),
            eb.or([eb('available_at', 'is', null), eb('available_at', '<=', input.now)]),
          ]),
        ]),
      )
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(input.limit)
      .execute();
  },

  /** Unfinished jobs per status, for the queue depth gauge. */
  async countUnfinishedByStatus(db: Executor): Promise<Record<string, number>> {
    const rows = await db
      .selectFrom('jobs')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', 'in', UNFINISHED_STATUSES)
      .groupBy('status')
      .execute();
    const counts: Record<string, number> = Object.fromEntries(UNFINISHED_STATUSES.map((s) => [s, 0]));
    for (const row of rows) counts[row.status] = Number(row.n);
    return counts;
  },
};
