import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import {
  CreateJobUseCase,
  JobFailure,
  ReconcileJobsUseCase,
  RunLedgerJobUseCase,
  type CreateJobInput,
} from '@hearth/app';
import { type Db, inTransaction, jobsRepository, type JobRow } from '@hearth/persistence';
import {
  DB,
  enqueueLedgerJob,
  JsonLogger,
  loadConfig,
  openPlatformResources,
  type JobDelivery,
  type JobPayloads,
  type PlatformResources,
} from '@hearth/platform';
import { MaintenanceScanProcessor } from '../../apps/worker/src/processors/maintenance-scan.processor';
import { BackupTransferProcessor } from '../../apps/worker/src/processors/backup-transfer.processor';
import { ChatTransferProcessor } from '../../apps/worker/src/processors/chat-transfer.processor';
import type { JobProcessor } from '../../apps/worker/src/processors/job-processor';
import {
  startWorker,
  type WorkerHandle,
  type WorkerRuntimeOptions,
} from '../../apps/worker/src/worker-runtime';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { waitFor } from '../support/poll';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

jest.setTimeout(60_000);

/** Counts every attempt's work per job id, so tests can tell a no-op delivery from a real run. */
const workRuns = new Map<string, number>();

/**
 * A `system.ping` processor whose work follows the row's payload: `{mode: 'fail'|'fatal'|'slow'}`.
 * Transport only, like the real one: it calls the ledger runner.
 */
@Injectable()
class ScriptedPingProcessor implements JobProcessor<'system.ping'> {
  readonly jobName = 'system.ping' as const;
  constructor(private readonly runner: RunLedgerJobUseCase) {}

  handle(payload: JobPayloads['system.ping'], delivery: JobDelivery<'system.ping'>) {
    return this.runner.execute(
      'system.ping',
      payload.job_id,
      async ({ job, signal }) => {
        workRuns.set(job.id, (workRuns.get(job.id) ?? 0) + 1);
        const script = job.payload as { mode?: string; ms?: number };
        if (script.mode === 'fail') throw new Error(`scripted failure of attempt ${job.attempt_count}`);
        if (script.mode === 'fatal')
          throw new JobFailure('the binding is invalid', 'agent_binding_invalid', 'fatal');
        if (script.mode === 'slow') {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, script.ms ?? 1000);
            signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
          });
        }
        return { pong: true, attempt: job.attempt_count };
      },
      delivery.signal,
    );
  }
}

const MODES = [
  { mode: 'bullmq', redis: true },
  { mode: 'in-process', redis: false },
] as const;

describe.each(MODES)('job ledger and worker ($mode)', ({ redis }) => {
  let database: TestDatabase;
  const opened: Array<{ resources: PlatformResources; worker?: WorkerHandle }> = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    for (const { resources, worker } of opened.reverse()) {
      await worker?.close().catch(() => undefined);
      await resources.close();
      if (redis) await deleteQueueKeys(REDIS_URL, resources.config.queuePrefix);
    }
    await database.drop();
  });

  async function open(env: Record<string, string> = {}, options: WorkerRuntimeOptions | null = {}) {
    const config = loadConfig({
      DATABASE_URL: database.url,
      ...(redis ? { REDIS_URL, QUEUE_PREFIX: `hearth-test-${randomBytes(4).toString('hex')}` } : {}),
      LOG_LEVEL: 'warn',
      ...env,
    });
    const resources = await openPlatformResources(config, {
      logger: new JsonLogger('silent'),
      applicationName: 'hearth-jobs-test',
    });
    const entry: { resources: PlatformResources; worker?: WorkerHandle } = { resources };
    opened.push(entry);
    if (options) {
      entry.worker = await startWorker(resources, {
        processors: [
          MaintenanceScanProcessor,
          ScriptedPingProcessor,
          ChatTransferProcessor,
          BackupTransferProcessor,
        ],
        jobRunner: { backoff: { baseMs: 150, maxMs: 1000 }, ...options.jobRunner },
        shutdownGraceMs: 5000,
        ...options,
      });
    }
    return { resources, worker: entry.worker, db: resources.database.db };
  }

  async function createJob(w: WorkerHandle, input: Partial<CreateJobInput> = {}) {
    return inTransaction(w.app.get<symbol, Db>(DB), (uow) =>
      w.app.get(CreateJobUseCase).execute(uow, { name: 'system.ping', ...input }),
    );
  }

  const row = async (db: PlatformResources['database']['db'], id: string) =>
    (await jobsRepository.findById(db, id))!;
  const reaches = (
    db: PlatformResources['database']['db'],
    id: string,
    status: JobRow['status'],
    timeoutMs?: number,
  ) =>
    waitFor(
      async () => {
        const current = await row(db, id);
        return current.status === status ? current : undefined;
      },
      `job ${id} to reach ${status}`,
      timeoutMs,
    );

  it('runs an enqueued job once and records the result: pending -> succeeded', async () => {
    const { worker, db, resources } = await open();
    const { job, created } = await createJob(worker!);
    expect(created).toBe(true);
    expect(job).toMatchObject({ status: 'pending', attempt_count: 0, queue: 'system', max_attempts: 3 });
    const done = await reaches(db, job.id, 'succeeded');
    expect(done).toMatchObject({
      attempt_count: 1,
      result: { pong: true, attempt: 1 },
      last_error: null,
      lease_expires_at: null,
    });
    expect(done.started_at).toBeGreaterThanOrEqual(job.created_at);
    expect(done.finished_at).toBeGreaterThanOrEqual(done.started_at!);
    expect(workRuns.get(job.id)).toBe(1);
    const metrics = await resources.metrics.registry.getSingleMetricAsString('hearth_jobs_total');
    expect(metrics).toMatch(/hearth_jobs_total\{name="system.ping",outcome="succeeded"\} [1-9]/);
  });

  it('treats a duplicate delivery of a finished job as a no-op', async () => {
    const { worker, db, resources } = await open();
    const { job } = await createJob(worker!);
    const done = await reaches(db, job.id, 'succeeded');
    await enqueueLedgerJob(resources.jobQueue, 'system.ping', job.id);
    await waitFor(
      async () => !(await resources.jobQueue.has('system.ping', job.id)),
      'the duplicate to be consumed',
    );
    // And the same delivery handed straight to the runner, twice at once.
    await Promise.all(
      [1, 2].map(() =>
        worker!.app.get(RunLedgerJobUseCase).execute('system.ping', job.id, async () => ({ again: true })),
      ),
    );
    expect(await row(db, job.id)).toEqual(done);
    expect(workRuns.get(job.id)).toBe(1);
  });

  it('a delivery while an attempt holds a live lease comes back when the lease ends, and takes a dead attempt over', async () => {
    const { worker, db, resources } = await open();
    // Claimed by a worker that then died (a stall check delivers its entry again): running, lease live.
    // The lease is long, so it is still live when the delivery runs however slow the machine is.
    const held = (await jobsRepository.insertPending(db, newRow(Date.now())))!;
    await jobsRepository.claim(db, { id: held.id, name: 'system.ping', now: Date.now(), leaseMs: 60_000 });
    const claimed = await row(db, held.id);
    const outcome = await worker!.app
      .get(RunLedgerJobUseCase)
      .execute('system.ping', held.id, async () => ({ taken: true }));
    expect(outcome).toEqual({ redeliverAt: claimed.lease_expires_at! + 1 });
    expect(await row(db, held.id)).toEqual(claimed);

    // The rest of the dead attempt's lease runs out shortly; the entry, delivered again, takes it over.
    await db
      .updateTable('jobs')
      .set({ lease_expires_at: Date.now() + 500 })
      .where('id', '=', held.id)
      .execute();
    await enqueueLedgerJob(resources.jobQueue, 'system.ping', held.id);
    expect(await reaches(db, held.id, 'succeeded')).toMatchObject({
      attempt_count: 2,
      result: { pong: true, attempt: 2 },
    });
    expect(workRuns.get(held.id)).toBe(1);
  });

  it('a delivery of a dead attempt whose attempts are spent dead-letters the job instead of running it again', async () => {
    const { worker, db } = await open();
    const now = Date.now();
    // The last of two attempts, claimed by a worker that died: running, lease over.
    const spent = (await jobsRepository.insertPending(db, { ...newRow(now), max_attempts: 2 }))!;
    await jobsRepository.claim(db, { id: spent.id, name: 'system.ping', now: now - 2000, leaseMs: 100 });
    await jobsRepository.claim(db, { id: spent.id, name: 'system.ping', now: now - 1000, leaseMs: 100 });
    expect(await row(db, spent.id)).toMatchObject({ status: 'running', attempt_count: 2 });
    const runner = worker!.app.get(RunLedgerJobUseCase);
    expect(await runner.execute('system.ping', spent.id, async () => ({ ran: true }))).toBeUndefined();
    expect(await row(db, spent.id)).toMatchObject({
      status: 'dead_letter',
      attempt_count: 2,
      last_error_code: 'job_lease_expired',
      last_error_class: 'uncertain',
      finished_at: expect.any(Number),
      lease_expires_at: null,
      result: null,
    });
    expect(workRuns.get(spent.id)).toBeUndefined();
  });

  it('dedupes creates by dedupe_key in Postgres', async () => {
    const { worker, db } = await open();
    const key = `ping:${randomBytes(4).toString('hex')}`;
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => createJob(worker!, { dedupe_key: key })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
    await reaches(db, results[0].job.id, 'succeeded');
    expect(workRuns.get(results[0].job.id)).toBe(1);
  });

  it('retries a failing job with backoff into retry_waiting, then dead_letter after max_attempts', async () => {
    const { worker, db } = await open({}, { jobRunner: { backoff: { baseMs: 400, maxMs: 400 } } });
    const { job } = await createJob(worker!, { payload: { mode: 'fail' } });
    const waiting = await reaches(db, job.id, 'retry_waiting');
    expect(waiting).toMatchObject({
      attempt_count: 1,
      last_error: 'scripted failure of attempt 1',
      last_error_code: 'job_failed',
      last_error_class: 'retryable',
      finished_at: null,
    });
    expect(waiting.available_at).toBeGreaterThan(waiting.started_at!);
    const dead = await reaches(db, job.id, 'dead_letter');
    expect(dead).toMatchObject({
      attempt_count: 3,
      last_error: 'scripted failure of attempt 3',
      result: null,
    });
    expect(dead.finished_at).not.toBeNull();
    expect(workRuns.get(job.id)).toBe(3);
  });

  it('dead-letters a fatal failure at the first attempt', async () => {
    const { worker, db } = await open();
    const { job } = await createJob(worker!, { payload: { mode: 'fatal' }, max_attempts: 5 });
    const dead = await reaches(db, job.id, 'dead_letter');
    expect(dead).toMatchObject({
      attempt_count: 1,
      last_error_code: 'agent_binding_invalid',
      last_error_class: 'fatal',
    });
  });

  it('does nothing for a cancelled job when its delivery arrives', async () => {
    const { worker, db, resources } = await open();
    const { job } = await createJob(worker!, { available_at: Date.now() + 600 });
    const cancelled = await jobsRepository.cancel(db, { id: job.id, now: Date.now() });
    expect(cancelled?.status).toBe('cancelled');
    expect(await jobsRepository.cancel(db, { id: job.id, now: Date.now() })).toBeUndefined();
    await waitFor(
      async () => !(await resources.jobQueue.has('system.ping', job.id)),
      'the delivery to be consumed',
    );
    expect(await row(db, job.id)).toMatchObject({ status: 'cancelled', attempt_count: 0, started_at: null });
    expect(workRuns.get(job.id)).toBeUndefined();
  });

  it('lets a running job finish on graceful shutdown', async () => {
    const { worker, db } = await open();
    const { job } = await createJob(worker!, { payload: { mode: 'slow', ms: 1200 } });
    await reaches(db, job.id, 'running');
    const closedAt = Date.now();
    await worker!.close();
    expect(Date.now() - closedAt).toBeGreaterThan(300);
    expect(await row(db, job.id)).toMatchObject({
      status: 'succeeded',
      attempt_count: 1,
      result: { pong: true, attempt: 1 },
    });
  });

  it('hands a running job back when it outlasts the shutdown grace, and another worker finishes it', async () => {
    const first = await open({}, { shutdownGraceMs: 200 });
    const { job } = await createJob(first.worker!, { payload: { mode: 'slow', ms: 60_000 } });
    await reaches(first.db, job.id, 'running');
    await first.worker!.close();
    expect(await row(first.db, job.id)).toMatchObject({
      status: 'retry_waiting',
      attempt_count: 1,
      lease_expires_at: null,
    });
    // The next worker's start-up reconciliation enqueues it again; make the rerun quick.
    await first.db
      .updateTable('jobs')
      .set({ payload: JSON.stringify({ mode: 'slow', ms: 10 }) })
      .where('id', '=', job.id)
      .execute();
    const second = await open(redis ? { QUEUE_PREFIX: first.resources.config.queuePrefix } : {});
    expect(await reaches(second.db, job.id, 'succeeded')).toMatchObject({ attempt_count: 2 });
  });

  it('reconciler: re-enqueues a pending row the queue lost, returns an expired lease', async () => {
    const { worker, db, resources } = await open({}, { jobRunner: { leaseMs: 300 } });
    const reconcile = worker!.app.get(ReconcileJobsUseCase);
    // A row committed while its enqueue was lost (never reached the queue).
    const now = Date.now();
    const lost = (await jobsRepository.insertPending(db, newRow(now)))!;
    // A row claimed by a worker that died: running, lease already over.
    const stuck = (await jobsRepository.insertPending(db, newRow(now)))!;
    await jobsRepository.claim(db, { id: stuck.id, name: 'system.ping', now: now - 1000, leaseMs: 100 });
    expect(await resources.jobQueue.has('system.ping', lost.id)).toBe(false);

    const result = await reconcile.execute();
    expect(result.expired_leases).toBeGreaterThanOrEqual(1);
    expect(result.reenqueued).toBeGreaterThanOrEqual(1);
    expect(await reaches(db, lost.id, 'succeeded')).toMatchObject({ attempt_count: 1 });
    const handedBack = await row(db, stuck.id);
    expect(['retry_waiting', 'running', 'succeeded']).toContain(handedBack.status);
    await reconcile.execute();
    expect(await reaches(db, stuck.id, 'succeeded')).toMatchObject({
      attempt_count: 2,
      last_error_code: 'job_lease_expired',
    });
    const depth = await resources.metrics.registry.getSingleMetricAsString('hearth_queue_depth');
    expect(depth).toContain('status="pending"');
  });

  it('dead-letters an expired lease whose attempts are spent', async () => {
    const { worker, db } = await open();
    const now = Date.now();
    const stuck = (await jobsRepository.insertPending(db, { ...newRow(now), max_attempts: 1 }))!;
    await jobsRepository.claim(db, { id: stuck.id, name: 'system.ping', now: now - 1000, leaseMs: 100 });
    await worker!.app.get(ReconcileJobsUseCase).execute();
    expect(await row(db, stuck.id)).toMatchObject({
      status: 'dead_letter',
      attempt_count: 1,
      last_error_class: 'uncertain',
    });
  });

  it('runs the repeatable maintenance.scan when ENABLE_RUNTIME_MAINTENANCE=true, which re-enqueues lost rows', async () => {
    const { db, resources } = await open({
      ENABLE_RUNTIME_MAINTENANCE: 'true',
      MAINTENANCE_INTERVAL_MS: '200',
    });
    const lost = (await jobsRepository.insertPending(db, newRow(Date.now())))!;
    expect(await reaches(db, lost.id, 'succeeded')).toMatchObject({ attempt_count: 1 });
    if (redis) {
      const client = new Redis(REDIS_URL);
      try {
        const keys = await client.keys(`${resources.config.queuePrefix}:system:*`);
        expect(keys.some((k) => k.includes('repeat'))).toBe(true);
      } finally {
        client.disconnect();
      }
    }
  });
});

function newRow(now: number) {
  return {
    id: `job_${randomBytes(8).toString('hex')}`,
    name: 'system.ping',
    queue: 'system',
    phase: null,
    account_id: null,
    workspace_id: null,
    project_id: null,
    payload: '{}',
    result: null,
    dedupe_key: null,
    max_attempts: 3,
    available_at: null,
    started_at: null,
    finished_at: null,
    last_error: null,
    last_error_code: null,
    last_error_class: null,
    created_at: now,
    updated_at: now,
  };
}
