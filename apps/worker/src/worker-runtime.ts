import type { INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  AgentRunDispatcher,
  ReconcileJobsUseCase,
  RequestSystemPingUseCase,
  RunLedgerJobUseCase,
  type JobRunnerSettings,
} from '@hearth/app';
import { jobsRepository } from '@hearth/persistence';
import {
  createJobConsumer,
  isJobName,
  QUEUE_NAMES,
  JOB_DEFINITIONS,
  JOB_NAMES,
  type JobConsumer,
  type JobName,
  type PlatformResources,
  type QueueName,
} from '@hearth/platform';
import type { JobProcessor } from './processors/job-processor';
import { WORKER_PROCESSORS, WorkerModule } from './worker.module';

export interface WorkerRuntimeOptions {
  processors?: ReadonlyArray<Type<JobProcessor>>;
  jobRunner?: Partial<JobRunnerSettings>;
  /** Jobs run at once per queue. */
  concurrency?: number;
  /**
   * BullMQ lock duration and stall-check interval; `JOB_LOCK_DURATION_MS` when unset. (The ledger
   * lease is `jobRunner.leaseMs`, `JOB_LEASE_MS` when unset.)
   */
  lockDurationMs?: number;
  /** How long close() waits for running jobs before handing them back. */
  shutdownGraceMs?: number;
  /** Enqueue one `system.ping` at start and log when it succeeds. */
  selfCheck?: boolean;
}

export interface WorkerHandle {
  app: INestApplicationContext;
  /** The queues this worker consumes. */
  queues: QueueName[];
  /** Stops taking jobs, waits for running ones (or hands them back after the grace period). */
  close(): Promise<void>;
}

/** Thrown when the processors do not give exactly one handler per consumed job name. */
export class WorkerStartError extends Error {
  constructor(readonly problems: string[]) {
    super(`The worker cannot start:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'WorkerStartError';
  }
}

/** Queues this worker consumes: every queue with a handled job, unless its config gate is off. */
export function consumedQueues(config: PlatformResources['config']): {
  queues: QueueName[];
  required: JobName[];
} {
  const required = JOB_NAMES.filter((name) => {
    const definition = JOB_DEFINITIONS[name];
    return definition.handled && (!definition.gate || config[definition.gate]);
  });
  return { queues: [...new Set(required.map((name) => JOB_DEFINITIONS[name].queue))], required };
}

/** Checks that processors give exactly one handler per required job name (ARCHITECTURE.md rule 9). */
export function checkProcessors(processors: ReadonlyArray<JobProcessor>, required: JobName[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  for (const processor of processors) {
    if (!isJobName(processor.jobName))
      problems.push(`${processor.constructor.name} handles unknown job ${processor.jobName}`);
    seen.set(processor.jobName, (seen.get(processor.jobName) ?? 0) + 1);
  }
  for (const [name, count] of seen)
    if (count > 1) problems.push(`job ${name} has ${count} handlers; exactly one is allowed`);
  for (const name of required) if (!seen.has(name)) problems.push(`job ${name} has no handler`);
  return problems;
}

/**
 * Starts the worker tier on resources opened by the caller: `npm run start:worker`, or the API
 * process in `--all-in-one` mode (same resources, so the in-process queue reaches it).
 */
export async function startWorker(
  resources: PlatformResources,
  options: WorkerRuntimeOptions = {},
): Promise<WorkerHandle> {
  const { config, logger } = resources;
  const processorTypes = options.processors ?? WORKER_PROCESSORS;
  const app = await NestFactory.createApplicationContext(
    WorkerModule.register(resources, {
      processors: processorTypes,
      jobRunner: { leaseMs: config.jobLeaseMs, ...options.jobRunner },
    }),
    { logger, abortOnError: false },
  );
  let consumer: JobConsumer | null = null;
  let closing: Promise<void> | null = null;
  let scheduleGuard: NodeJS.Timeout | null = null;
  try {
    const { queues, required } = consumedQueues(config);
    const processors = processorTypes.map((type) => app.get(type));
    const problems = checkProcessors(processors, required);
    if (problems.length > 0) throw new WorkerStartError(problems);
    for (const name of JOB_NAMES) {
      const definition = JOB_DEFINITIONS[name];
      if (definition.gate && config[definition.gate] && !definition.handled) {
        logger.warn(
          { msg: `${name} has no handler in this build; its jobs stay pending`, job: name },
          'Worker',
        );
      }
    }

    // Before consuming: whatever the queues lost while no worker ran goes back in.
    const reconciled = await app.get(ReconcileJobsUseCase).execute();
    logger.log({ msg: 'start-up reconciliation done', ...reconciled }, 'Worker');

    consumer = createJobConsumer(
      resources.jobQueue,
      config,
      {
        queues,
        concurrency: options.concurrency,
        lockDurationMs: options.lockDurationMs ?? config.jobLockDurationMs,
        stalledIntervalMs: options.lockDurationMs ?? config.jobLockDurationMs,
        onError: (error, context) =>
          logger.error(
            { msg: 'job delivery failed', job: context.name, job_id: context.jobId, error: String(error) },
            'Worker',
          ),
      },
      (error) => logger.warn({ msg: 'worker queue connection error', error: String(error) }, 'Worker'),
    );
    for (const processor of processors) {
      if (!queues.includes(JOB_DEFINITIONS[processor.jobName].queue)) continue;
      consumer.register(processor.jobName, (payload, delivery) =>
        processor.handle(payload as never, delivery as never),
      );
    }
    await consumer.start();
    // Agent jobs created by the Project event trigger are enqueued as soon as it notifies them.
    if (queues.includes(QUEUE_NAMES.agent)) app.get(AgentRunDispatcher).start();

    if (config.enableRuntimeMaintenance) {
      const ensure = () =>
        resources.jobQueue
          .ensureMaintenanceSchedule(config.maintenanceIntervalMs)
          .catch((error) =>
            logger.warn({ msg: 'cannot schedule the maintenance scan', error: String(error) }, 'Worker'),
          );
      await ensure();
      // Redis here keeps nothing on disk: after a restart the scheduler itself is gone, so check it.
      if (resources.jobQueue.kind === 'bullmq') {
        scheduleGuard = setInterval(() => void ensure(), config.maintenanceIntervalMs);
        scheduleGuard.unref();
      }
    }
    logger.log(
      {
        msg: 'worker started',
        queues,
        maintenance: config.enableRuntimeMaintenance,
        transport: resources.jobQueue.kind,
      },
      'Worker',
    );
    if (options.selfCheck) void selfCheck(app, resources, () => closing !== null);
  } catch (error) {
    if (scheduleGuard) clearInterval(scheduleGuard);
    await app
      .get(AgentRunDispatcher)
      .close()
      .catch(() => undefined);
    await consumer?.close(0).catch(() => undefined);
    await app.close();
    throw error;
  }

  return {
    app,
    queues: consumedQueues(config).queues,
    close() {
      closing ??= (async () => {
        if (scheduleGuard) clearInterval(scheduleGuard);
        await app.get(AgentRunDispatcher).close();
        const grace = options.shutdownGraceMs ?? 10_000;
        await consumer!.close(grace, async () => {
          const handedBack = await app.get(RunLedgerJobUseCase).handBackInFlight();
          logger.warn(
            { msg: 'jobs still running at shutdown were handed back', count: handedBack },
            'Worker',
          );
        });
        await app.close();
        logger.log({ msg: 'worker stopped' }, 'Worker');
      })();
      return closing;
    },
  };
}

/** Enqueues one `system.ping` and logs when it succeeds: the whole path works. */
async function selfCheck(
  app: INestApplicationContext,
  resources: PlatformResources,
  stopped: () => boolean,
): Promise<void> {
  const { logger, database } = resources;
  try {
    const job = await app.get(RequestSystemPingUseCase).execute();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !stopped()) {
      const row = await jobsRepository.findById(database.db, job.id);
      if (row?.status === 'succeeded') {
        logger.log({ msg: 'worker self-check passed', job_id: job.id, result: row.result }, 'Worker');
        return;
      }
      if (row && ['dead_letter', 'cancelled'].includes(row.status)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!stopped())
      logger.warn({ msg: 'worker self-check did not succeed in time', job_id: job.id }, 'Worker');
  } catch (error) {
    if (!stopped()) logger.warn({ msg: 'worker self-check failed', error: String(error) }, 'Worker');
  }
}
