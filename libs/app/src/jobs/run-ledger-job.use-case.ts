import { Inject, Injectable } from '@nestjs/common';
import { type Db, IN_FLIGHT_STATUSES, jobsRepository, type JobRow } from '@hearth/persistence';
import {
  DB,
  JOB_DEFINITIONS,
  type JobHandlerOutcome,
  type LedgerJobName,
  LOGGER,
  type JsonLogger,
  METRICS,
  type Metrics,
} from '@hearth/platform';
import { describeJobError } from './job-failure';
import { decideAfterFailure } from './job-retry-policy';
import { JOB_RUNNER_SETTINGS, type JobRunnerSettings } from './job-runner-settings';

export interface LedgerJobContext {
  /** The row as claimed (status `running`, this attempt counted). */
  job: JobRow;
  attempt: number;
  /** Aborted when the lease is lost or the worker stops waiting at shutdown. */
  signal: AbortSignal;
}

/** The work of one attempt; its return value (JSON) becomes the job's `result`. */
export type LedgerJobWork = (context: LedgerJobContext) => Promise<unknown>;

export type LedgerJobOutcome = 'succeeded' | 'retry' | 'dead_letter' | 'skipped' | 'lost_lease' | 'busy';

/**
 * How a delivery claims its row: the row as claimed (status `running`, attempt counted), undefined
 * when it is not claimable, or `{busy: true}` when it must wait (e.g. another job of its serial scope
 * is running). Default: `jobsRepository.claim`.
 */
export type LedgerJobClaim = (input: {
  id: string;
  name: LedgerJobName;
  now: number;
  leaseMs: number;
}) => Promise<JobRow | { busy: true } | undefined>;

export interface LedgerJobOptions {
  /** Replaces the default claim (`agent.run` claims inside its serial scope). */
  claim?: LedgerJobClaim;
  /** How long a busy delivery waits before it is delivered again (default 1 s). */
  busyRedeliverMs?: number;
}

/** A busy delivery comes back after this long unless the caller says otherwise. */
export const DEFAULT_BUSY_REDELIVER_MS = 1_000;

interface InFlight {
  id: string;
  attempt: number;
  controller: AbortController;
}

/**
 * Runs one delivery of a ledger job: claims the row by a conditional update (a duplicate delivery,
 * a finished or cancelled job claims nothing and is a no-op; a caller's claim may also answer
 * "busy", and the same entry is then delivered again shortly without counting an attempt), renews
 * its lease while the work runs, then records `succeeded` with the result, or the error and either `retry_waiting` (with backoff;
 * the transport redelivers the same entry then) or `dead_letter`. Every finishing update is fenced
 * by the attempt number, so a worker whose lease was taken over cannot overwrite the new attempt.
 */
@Injectable()
export class RunLedgerJobUseCase {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(LOGGER) private readonly logger: JsonLogger,
    @Inject(METRICS) private readonly metrics: Metrics,
    @Inject(JOB_RUNNER_SETTINGS) private readonly settings: JobRunnerSettings,
  ) {}

  async execute(
    name: LedgerJobName,
    jobId: string,
    work: LedgerJobWork,
    deliverySignal?: AbortSignal,
    options: LedgerJobOptions = {},
  ): Promise<JobHandlerOutcome | void> {
    const started = performance.now();
    const now = Date.now();
    const leaseMs = this.settings.leaseMs;
    const claimed = options.claim
      ? await options.claim({ id: jobId, name, now, leaseMs })
      : await jobsRepository.claim(this.db, { id: jobId, name, now, leaseMs });
    if (claimed && 'busy' in claimed) {
      // Claimable but not now: the row stays as it is (no attempt counted), the entry comes back.
      this.observe(name, 'busy', started);
      return { redeliverAt: Date.now() + (options.busyRedeliverMs ?? DEFAULT_BUSY_REDELIVER_MS) };
    }
    const job = claimed;
    if (!job) return this.notClaimed(name, jobId, started);

    const attempt = job.attempt_count;
    const controller = new AbortController();
    const onDeliveryAbort = () => controller.abort(deliverySignal?.reason);
    deliverySignal?.addEventListener('abort', onDeliveryAbort, { once: true });
    const entry: InFlight = { id: job.id, attempt, controller };
    this.inFlight.set(job.id, entry);
    const renewal = setInterval(
      () => {
        const at = Date.now();
        jobsRepository
          .renewLease(this.db, { id: job.id, attempt, until: at + leaseMs, now: at })
          .then((held) => {
            if (!held) controller.abort(new Error('The job lease was lost'));
          })
          .catch((error) =>
            this.logger.warn(
              { msg: 'job lease renewal failed', job_id: job.id, error: String(error) },
              'Jobs',
            ),
          );
      },
      Math.max(10, Math.floor(leaseMs / 3)),
    );

    try {
      let result: unknown;
      try {
        result = await work({ job, attempt, signal: controller.signal });
      } catch (error) {
        return await this.failed(job, attempt, error, started);
      }
      const done = await jobsRepository.markSucceeded(this.db, {
        id: job.id,
        attempt,
        result: result ?? null,
        now: Date.now(),
      });
      this.observe(name, done ? 'succeeded' : 'lost_lease', started);
      if (!done)
        this.logger.warn(
          { msg: 'job finished after losing its lease; result dropped', job_id: job.id, name, attempt },
          'Jobs',
        );
    } finally {
      clearInterval(renewal);
      deliverySignal?.removeEventListener('abort', onDeliveryAbort);
      if (this.inFlight.get(job.id) === entry) this.inFlight.delete(job.id);
    }
  }

  /**
   * At shutdown, once the grace period is over: every attempt still running goes back to
   * `retry_waiting` (due now) so another worker takes it without waiting for the lease.
   */
  async handBackInFlight(): Promise<number> {
    let count = 0;
    for (const entry of [...this.inFlight.values()]) {
      // Hand back first, then abort: the aborted work can no longer record a result (fenced).
      if (await jobsRepository.handBack(this.db, { id: entry.id, attempt: entry.attempt, now: Date.now() }))
        count++;
      entry.controller.abort(new Error('The worker is shutting down'));
      this.inFlight.delete(entry.id);
    }
    return count;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  private async notClaimed(
    name: LedgerJobName,
    jobId: string,
    started: number,
  ): Promise<JobHandlerOutcome | void> {
    const row = await jobsRepository.findById(this.db, jobId);
    this.observe(name, 'skipped', started);
    if (!row) {
      this.logger.warn({ msg: 'delivery for an unknown job row ignored', job_id: jobId, name }, 'Jobs');
      return;
    }
    // Delivered early (e.g. a reconciler raced a retry): come back when it is due.
    if (row.status === 'retry_waiting' && row.available_at !== null && row.available_at > Date.now()) {
      return { redeliverAt: row.available_at };
    }
    // Delivered again while an attempt's lease is live: the transport's stall check found the entry's
    // lock gone (its worker died, or is stuck). Dropping the delivery would leave a dead worker's job
    // `running` until a reconciler pass; it comes back when the lease has run out, and is then
    // claimed (worker dead) or ignored (the attempt finished meanwhile).
    if (
      IN_FLIGHT_STATUSES.includes(row.status) &&
      row.lease_expires_at !== null &&
      row.lease_expires_at >= Date.now()
    ) {
      this.logger.debug(
        { msg: 'delivery of a job whose lease is live; back when it ends', job_id: jobId, name },
        'Jobs',
      );
      return { redeliverAt: row.lease_expires_at + 1 };
    }
    // An expired lease. On the last attempt (the claim takes an expired lease only while attempts
    // remain) the ledger, not the transport's stall limit, ends the job; otherwise the lease ran out
    // between the claim and this read, and the delivery comes back at once to claim it.
    if (IN_FLIGHT_STATUSES.includes(row.status) && row.lease_expires_at !== null) {
      const dead = await jobsRepository.deadLetterSpentLease(this.db, { id: jobId, now: Date.now() });
      if (dead) {
        this.logger.warn(
          {
            msg: 'job dead-lettered: its last attempt’s lease expired',
            job_id: jobId,
            name,
            attempt: dead.attempt_count,
            max_attempts: dead.max_attempts,
          },
          'Jobs',
        );
        return;
      }
      if (row.attempt_count < row.max_attempts) return { redeliverAt: Date.now() };
    }
    this.logger.debug(
      { msg: 'duplicate or stale delivery ignored', job_id: jobId, name, status: row.status },
      'Jobs',
    );
  }

  private async failed(
    job: JobRow,
    attempt: number,
    error: unknown,
    started: number,
  ): Promise<JobHandlerOutcome | void> {
    const name = job.name as LedgerJobName;
    const fields = describeJobError(error);
    const now = Date.now();
    const decision = decideAfterFailure({
      attempt,
      maxAttempts: job.max_attempts,
      errorClass: fields.last_error_class,
      backoff: this.settings.backoff ?? JOB_DEFINITIONS[name].backoff,
      now,
    });
    const log = {
      job_id: job.id,
      name,
      attempt,
      max_attempts: job.max_attempts,
      error_code: fields.last_error_code,
      error_class: fields.last_error_class,
    };
    if (decision.status === 'dead_letter') {
      const row = await jobsRepository.markDeadLetter(this.db, { id: job.id, attempt, error: fields, now });
      this.observe(name, row ? 'dead_letter' : 'lost_lease', started);
      if (row) this.logger.warn({ msg: 'job dead-lettered', ...log }, 'Jobs');
      return;
    }
    const row = await jobsRepository.markRetryWaiting(this.db, {
      id: job.id,
      attempt,
      availableAt: decision.availableAt,
      error: fields,
      now,
    });
    this.observe(name, row ? 'retry' : 'lost_lease', started);
    if (!row) return;
    this.logger.warn(
      { msg: 'job attempt failed; will retry', available_at: decision.availableAt, ...log },
      'Jobs',
    );
    return { redeliverAt: decision.availableAt };
  }

  private observe(name: string, outcome: LedgerJobOutcome, started: number): void {
    this.metrics.jobsTotal.inc({ name, outcome });
    this.metrics.jobDuration.observe({ name, outcome }, (performance.now() - started) / 1000);
  }
}
