import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { jobsRepository, type DatabaseHandle } from '@hearth/persistence';
import {
  DATABASE_HANDLE,
  enqueueLedgerJob,
  JOB_QUEUE,
  LOGGER,
  type JobQueue,
  type JsonLogger,
} from '@hearth/platform';
import { DEFAULT_JOB_RUNNER_SETTINGS } from '../jobs/job-runner-settings';

/** The channel the Project event trigger notifies with the id of each `agent.run` job it creates. */
export const AGENT_JOBS_CHANNEL = 'hearth_agent_jobs';

/**
 * Immediate dispatch of the jobs the Project event trigger creates (migration 20261127100000): those
 * rows are written by the database inside the event's transaction, so nothing in the service
 * enqueues them. A worker consuming `agent.run` LISTENs on `hearth_agent_jobs` and enqueues each
 * notified id (the queue ignores an id it already holds, so every worker may do it). Each time the
 * LISTEN is (re)established it also enqueues the due `agent.run` rows the queue does not hold, which
 * covers notifications sent while it was not listening; the reconciler stays the safety net.
 */
@Injectable()
export class AgentRunDispatcher implements OnApplicationShutdown {
  private stopListening: (() => Promise<void>) | null = null;
  private catchingUp: Promise<void> | null = null;
  private markCaughtUp!: () => void;
  private readonly firstCatchUp = new Promise<void>((resolve) => (this.markCaughtUp = resolve));

  constructor(
    @Inject(DATABASE_HANDLE) private readonly database: DatabaseHandle,
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  start(): void {
    if (this.stopListening) return;
    this.stopListening = this.database.listen(AGENT_JOBS_CHANNEL, {
      onNotification: (jobId) => void this.dispatch(jobId),
      onListening: (listening) => {
        if (listening) void this.catchUp().then(() => this.markCaughtUp());
        else
          this.logger.warn(
            { msg: 'agent job notifications lost; listening again (the reconciler covers the gap)' },
            'AgentRunDispatcher',
          );
      },
    });
  }

  /**
   * Resolves once the LISTEN has first been established and its catch-up pass has run: from then on,
   * rows written without a notification are enqueued only by whoever wrote them (or the reconciler).
   */
  caughtUp(): Promise<void> {
    return this.firstCatchUp;
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    const stop = this.stopListening;
    this.stopListening = null;
    await stop?.();
    await this.catchingUp;
  }

  /** Enqueues one notified job; a failure is logged (the reconciler enqueues the row later). */
  async dispatch(jobId: string): Promise<void> {
    if (!jobId) return;
    try {
      await enqueueLedgerJob(this.queue, 'agent.run', jobId);
    } catch (error) {
      this.logger.warn(
        {
          msg: 'agent job enqueue failed; the reconciler will enqueue it',
          job_id: jobId,
          error: String(error),
        },
        'AgentRunDispatcher',
      );
    }
  }

  /** Enqueues the due `agent.run` rows the queue does not hold (one pass at a time). */
  catchUp(): Promise<void> {
    this.catchingUp ??= this.enqueueMissing().finally(() => {
      this.catchingUp = null;
    });
    return this.catchingUp;
  }

  private async enqueueMissing(): Promise<void> {
    try {
      const rows = await jobsRepository.listDispatchable(this.database.db, {
        now: Date.now(),
        limit: DEFAULT_JOB_RUNNER_SETTINGS.reconcileBatch,
        names: ['agent.run'],
      });
      for (const row of rows) {
        if (!this.stopListening) return;
        if (!(await this.queue.has('agent.run', row.id))) await this.dispatch(row.id);
      }
    } catch (error) {
      this.logger.warn(
        { msg: 'agent job catch-up failed; the reconciler covers it', error: String(error) },
        'AgentRunDispatcher',
      );
    }
  }
}
