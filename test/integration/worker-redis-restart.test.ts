import { randomBytes } from 'node:crypto';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { JobsModule, RequestSystemPingUseCase } from '@hearth/app';
import { jobsRepository, type JobRow } from '@hearth/persistence';
import {
  JsonLogger,
  loadConfig,
  openPlatformResources,
  PlatformModule,
  type PlatformResources,
} from '@hearth/platform';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import { RestartableRedis } from '../support/private-redis';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

jest.setTimeout(90_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

@Module({})
class ProducerModule {}

/**
 * Redis on this machine keeps nothing on disk, so a restart wipes every queue entry
 * (performance-and-reliability.md C1, R2). The ledger rows stay, and the reconciler puts them back:
 * at worker start, and from the maintenance scan, whose scheduler is itself re-created after a wipe.
 */
describe('jobs survive a Redis restart that wipes the queues', () => {
  let redis: RestartableRedis;
  let database: TestDatabase;
  let producer: PlatformResources;
  let producerApp: INestApplicationContext;
  let workerResources: PlatformResources | null = null;
  let worker: WorkerHandle | null = null;
  const prefix = `hearth-test-${randomBytes(4).toString('hex')}`;

  const env = () => ({
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: prefix,
    ENABLE_RUNTIME_MAINTENANCE: 'true',
    MAINTENANCE_INTERVAL_MS: '300',
  });

  beforeAll(async () => {
    redis = await RestartableRedis.create();
    database = await createTestDatabase();
    producer = await openPlatformResources(loadConfig(env()), { logger: new JsonLogger('silent') });
    producerApp = await NestFactory.createApplicationContext(
      { module: ProducerModule, imports: [PlatformModule.register(producer), JobsModule.register()] },
      { logger: false },
    );
  });

  afterAll(async () => {
    // Each step bounded and named: a shutdown that hangs fails with the step's name, not a bare hook
    // timeout (one CI run on a loaded machine timed out here without telling which step it was).
    const stalled: string[] = [];
    const step = async (name: string, run: () => Promise<unknown> | undefined) => {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 12_000)));
      const outcome = await Promise.race([Promise.resolve(run()).then(() => 'done' as const), timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') stalled.push(name);
    };
    await step('worker.close', () => worker?.close());
    await step('workerResources.close', () => workerResources?.close());
    await step('producerApp.close', () => producerApp?.close());
    await step('producer.close', () => producer?.close());
    await step('redis.stop', () => redis?.stop());
    await step('database.drop', () => database?.drop());
    expect(stalled).toEqual([]);
  });

  const row = async (id: string) => (await jobsRepository.findById(producer.database.db, id))!;
  async function reaches(id: string, status: JobRow['status'], timeoutMs = 30_000): Promise<JobRow> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await row(id);
      if (current.status === status) return current;
      if (Date.now() > deadline) throw new Error(`job ${id} stayed ${current.status}, expected ${status}`);
      await sleep(50);
    }
  }
  async function queueHolds(id: string): Promise<boolean | 'unreachable'> {
    return producer.jobQueue.has('system.ping', id).catch(() => 'unreachable' as const);
  }

  it('re-enqueues at worker start a pending job whose queue entry a restart wiped', async () => {
    const job = await producerApp.get(RequestSystemPingUseCase).execute();
    expect(await queueHolds(job.id)).toBe(true);

    await redis.wipe();
    await redis.start();
    const deadline = Date.now() + 15_000;
    while ((await queueHolds(job.id)) !== false) {
      if (Date.now() > deadline) throw new Error('the producer did not reconnect');
      await sleep(100);
    }
    expect(await row(job.id)).toMatchObject({ status: 'pending', attempt_count: 0 });

    workerResources = await openPlatformResources(loadConfig(env()), { logger: new JsonLogger('silent') });
    worker = await startWorker(workerResources, { shutdownGraceMs: 2000 });
    expect(await reaches(job.id, 'succeeded')).toMatchObject({ attempt_count: 1, result: { pong: true } });
  });

  it('accepts a job while Redis is down (row written, enqueue fails fast) and runs it once Redis is back', async () => {
    const before = await producerApp.get(RequestSystemPingUseCase).execute();
    await reaches(before.id, 'succeeded');

    await redis.wipe();
    const started = Date.now();
    const during = await producerApp.get(RequestSystemPingUseCase).execute();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await row(during.id)).toMatchObject({ status: 'pending' });
    await sleep(500);
    expect(await row(during.id)).toMatchObject({ status: 'pending' });

    await redis.start();
    // The maintenance scheduler was wiped too; the worker re-creates it and the scan re-enqueues.
    expect(await reaches(during.id, 'succeeded')).toMatchObject({ attempt_count: 1, result: { pong: true } });
    expect(await row(before.id)).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    // The schedule guard (every MAINTENANCE_INTERVAL_MS) re-creates the scheduler. A scan can also run
    // from a scan job the worker still held when Redis was wiped, before the guard's next round, so
    // the scheduler may appear after the job above succeeded: it gets a few rounds.
    const deadline = Date.now() + 10_000;
    let schedulerKeys = '';
    while (!schedulerKeys.includes('repeat') && Date.now() < deadline) {
      schedulerKeys = await redis.cli(['--scan', '--pattern', `${prefix}:system:repeat*`]);
      if (!schedulerKeys.includes('repeat')) await sleep(100);
    }
    expect(schedulerKeys).toContain('repeat');
  });
});
