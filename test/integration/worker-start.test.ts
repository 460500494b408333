import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SystemPingUseCase } from '@hearth/app';
import { jobsRepository } from '@hearth/persistence';
import {
  JsonLogger,
  loadConfig,
  openPlatformResources,
  type JobPayloads,
  type PlatformResources,
} from '@hearth/platform';
import type { JobProcessor } from '../../apps/worker/src/processors/job-processor';
import { MaintenanceScanProcessor } from '../../apps/worker/src/processors/maintenance-scan.processor';
import { SystemPingProcessor } from '../../apps/worker/src/processors/system-ping.processor';
import { pingWorkers } from '../../apps/worker/src/ping';
import { WORKER_PROCESSORS } from '../../apps/worker/src/worker.module';
import { ChatTransferProcessor } from '../../apps/worker/src/processors/chat-transfer.processor';
import { AgentRunProcessor } from '../../apps/worker/src/processors/agent-run.processor';
import { BackupTransferProcessor } from '../../apps/worker/src/processors/backup-transfer.processor';
import { consumedQueues, startWorker, WorkerStartError } from '../../apps/worker/src/worker-runtime';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

jest.setTimeout(60_000);

@Injectable()
class SecondPingProcessor implements JobProcessor<'system.ping'> {
  readonly jobName = 'system.ping' as const;
  constructor(private readonly ping: SystemPingUseCase) {}
  handle(payload: JobPayloads['system.ping']) {
    return this.ping.execute(payload.job_id);
  }
}

@Injectable()
class MisnamedProcessor {
  readonly jobName = 'no.such.job';
  async handle() {}
}

describe('worker start', () => {
  let database: TestDatabase;
  let resources: PlatformResources;

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = loadConfig({
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: `hearth-test-${randomBytes(4).toString('hex')}`,
    });
    resources = await openPlatformResources(config, { logger: new JsonLogger('silent') });
  });

  afterAll(async () => {
    await resources.close();
    await deleteQueueKeys(REDIS_URL, resources.config.queuePrefix);
    await database.drop();
  });

  it('ships exactly one processor per handled job name', () => {
    expect(WORKER_PROCESSORS).toEqual([
      MaintenanceScanProcessor,
      SystemPingProcessor,
      ChatTransferProcessor,
      AgentRunProcessor,
      BackupTransferProcessor,
    ]);
  });

  it('refuses to start when a consumed job name has no handler', async () => {
    const error = await startWorker(resources, {
      processors: [MaintenanceScanProcessor, ChatTransferProcessor, BackupTransferProcessor],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerStartError);
    expect((error as WorkerStartError).problems).toEqual(['job system.ping has no handler']);
  });

  it('refuses to start when a job name has two handlers', async () => {
    const error = await startWorker(resources, {
      processors: [MaintenanceScanProcessor, SystemPingProcessor, ChatTransferProcessor, SecondPingProcessor],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerStartError);
    expect((error as WorkerStartError).message).toContain('job system.ping has 2 handlers');
  });

  it('refuses to start with a handler for an unknown job name', async () => {
    const error = await startWorker(resources, {
      processors: [...WORKER_PROCESSORS, MisnamedProcessor as never],
    }).catch((e: unknown) => e);
    expect((error as WorkerStartError).problems).toEqual([
      'MisnamedProcessor handles unknown job no.such.job',
    ]);
  });

  it('consumes the system queue always and agent.run only behind ENABLE_AGENT_RUNTIME_WORKER', () => {
    expect(consumedQueues(loadConfig({}))).toEqual({
      queues: ['system', 'chat'],
      required: ['maintenance.scan', 'system.ping', 'chat.transfer', 'backup.transfer'],
    });
    expect(consumedQueues(loadConfig({ ENABLE_AGENT_RUNTIME_WORKER: 'true' }))).toEqual({
      queues: ['system', 'agent', 'chat'],
      required: ['maintenance.scan', 'system.ping', 'agent.run', 'chat.transfer', 'backup.transfer'],
    });
  });

  it('starts with the shipped processors, reconciles, passes its self-check and stops', async () => {
    const lines: string[] = [];
    const own = await openPlatformResources(resources.config, {
      logger: new JsonLogger('info', (l) => lines.push(l)),
    });
    try {
      const worker = await startWorker(own, { selfCheck: true });
      expect(worker.queues).toEqual(['system', 'chat']);
      const deadline = Date.now() + 15_000;
      while (!lines.some((l) => l.includes('worker self-check passed')) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const passed = JSON.parse(lines.find((l) => l.includes('worker self-check passed'))!);
      expect(passed.result).toEqual({ pong: true });
      const row = await jobsRepository.findById(own.database.db, passed.job_id);
      expect(row).toMatchObject({
        name: 'system.ping',
        status: 'succeeded',
        attempt_count: 1,
        result: { pong: true },
      });
      expect(lines.some((l) => l.includes('start-up reconciliation done'))).toBe(true);
      await worker.close();
      expect(lines.some((l) => l.includes('worker stopped'))).toBe(true);
    } finally {
      await own.close();
    }
  });

  it('worker ping: pending when no worker consumes, succeeded once one runs', async () => {
    const unanswered = await pingWorkers(resources, 300);
    expect(unanswered).toMatchObject({ name: 'system.ping', status: 'pending', attempt_count: 0 });
    const worker = await startWorker(resources);
    try {
      // The start-up reconciliation does not even need to see the first one: the queue still holds it.
      const answered = await pingWorkers(resources, 15_000);
      expect(answered).toMatchObject({ status: 'succeeded', attempt_count: 1, result: { pong: true } });
      // Both pings may run at once (the queue's concurrency): the first finishes in its own time.
      const deadline = Date.now() + 15_000;
      let first = await jobsRepository.findById(resources.database.db, unanswered.id);
      while (first?.status !== 'succeeded' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        first = await jobsRepository.findById(resources.database.db, unanswered.id);
      }
      expect(first).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    } finally {
      await worker.close();
    }
  });
});
