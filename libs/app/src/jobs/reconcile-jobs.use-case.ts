import { Inject, Injectable } from '@nestjs/common';
import { type Db, jobsRepository } from '@hearth/persistence';
import {
  DB,
  enqueueLedgerJob,
  isLedgerJobName,
  JOB_NAMES,
  JOB_QUEUE,
  type JobQueue,
  JOB_DEFINITIONS,
  LOGGER,
  type JsonLogger,
  METRICS,
  type Metrics,
} from '@hearth/platform';
import { JOB_RUNNER_SETTINGS, type JobRunnerSettings } from './job-runner-settings';
import type { MaintenanceScanStep } from './maintenance-scan-step';

export interface ReconcileResult {
  /** In-flight rows whose lease expired, handed back (or dead-lettered when attempts were spent). */
  expired_leases: number;
  /** Dispatchable rows whose queue entry was gone and that were enqueued again. */
  reenqueued: number;
  /** Rows the queue could not be asked about (Redis down); tried again next pass. */
  unreachable: number;
  depth: Record<string, number>;
}

/**
 * Makes the queues agree with the ledger. Redis here keeps nothing on disk, so a restart wipes
 * every queue entry while the rows stay `pending`/`retry_waiting`; and a worker that died leaves
 * `running` rows behind. Runs at worker start and as the first step of `maintenance.scan`.
 */
@Injectable()
export class ReconcileJobsUseCase implements MaintenanceScanStep {
  readonly stepName = 'reconcile_jobs';

  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
    @Inject(LOGGER) private readonly logger: JsonLogger,
    @Inject(METRICS) private readonly metrics: Metrics,
    @Inject(JOB_RUNNER_SETTINGS) private readonly settings: JobRunnerSettings,
  ) {}

  run(): Promise<ReconcileResult> {
    return this.execute();
  }

  async execute(): Promise<ReconcileResult> {
    const now = Date.now();
    const expired = await jobsRepository.returnExpiredLeases(this.db, now);
    for (const row of expired) {
      this.logger.warn(
        { msg: 'job lease expired; handed back', job_id: row.id, name: row.name, status: row.status },
        'Reconciler',
      );
    }

    // Rows of job names whose queue no worker here consumes are still enqueued: the queue holds
    // them until a worker that consumes it (e.g. ENABLE_AGENT_RUNTIME_WORKER) takes them.
    const names = JOB_NAMES.filter((name) => JOB_DEFINITIONS[name].ledger);
    const rows = await jobsRepository.listDispatchable(this.db, {
      now,
      limit: this.settings.reconcileBatch,
      names,
    });
    let reenqueued = 0;
    let unreachable = 0;
    for (const row of rows) {
      if (!isLedgerJobName(row.name)) continue;
      try {
        if (await this.queue.has(row.name, row.id)) continue;
        await enqueueLedgerJob(this.queue, row.name, row.id);
        reenqueued++;
      } catch (error) {
        unreachable++;
        if (unreachable === 1) {
          this.logger.warn(
            { msg: 'reconciler cannot reach the job queue', error: String(error) },
            'Reconciler',
          );
        }
      }
    }
    if (reenqueued > 0)
      this.logger.log({ msg: 'reconciler re-enqueued jobs', count: reenqueued }, 'Reconciler');

    const depth = await jobsRepository.countUnfinishedByStatus(this.db);
    for (const [status, count] of Object.entries(depth)) this.metrics.queueDepth.set({ status }, count);
    return { expired_leases: expired.length, reenqueued, unreachable, depth };
  }
}
