import { DelayedError, type Job, Queue, Worker } from 'bullmq';
import {
  type EnqueueOptions,
  type JobConsumer,
  type JobConsumerOptions,
  type JobHandler,
  type JobName,
  type JobPayloads,
  type JobQueue,
  MAINTENANCE_SCHEDULER_ID,
  type QueueName,
  QUEUE_NAMES,
  isJobName,
  JOB_DEFINITIONS,
  queueOfJob,
} from './jobs';
import { settledWithin } from './settled-within';

/** Reconnect quickly after a Redis restart (BullMQ's default backs off to 20 s). */
const retryStrategy = (times: number) => Math.min(200 * times, 2_000);

export interface BullMqSettings {
  url: string;
  /** Key prefix, so deployments (and test suites) sharing one Redis do not share queues. */
  prefix: string;
  onError?: (error: unknown) => void;
}

/** States in which BullMQ still holds an entry that will be (or is being) delivered. */
const HELD_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/**
 * How many times BullMQ redelivers an entry whose worker lost its lock (died, or was stuck past the
 * lock) before it fails the entry itself ("job stalled more than allowable limit"), which, with
 * `removeOnFail`, drops it and leaves the ledger row in flight until a reconciler pass. BullMQ's
 * default, 1, failed a job whose worker died twice. The ledger decides instead: each stall of a dead
 * worker is one attempt (an expired lease is counted, and at max attempts the row goes to
 * `dead_letter`), so the entry must survive at least the largest `maxAttempts` (5) stalls, plus those of
 * a live but stuck worker, which count no attempt (its delivery waits for the lease). BullMQ counts
 * stalls over the entry's whole life (retries through moveToDelayed keep the count), hence ten per
 * attempt: 50, a bound that only a worker stalling again and again on one job can reach.
 */
export const MAX_STALLED_COUNT =
  10 * Math.max(...Object.values(JOB_DEFINITIONS).map((definition) => definition.maxAttempts));

/** How long a producer call waits for a first connection before failing. */
const FIRST_CONNECT_TIMEOUT_MS = 2_000;
/** After the grace and the abort, how long close() still waits for the handlers to return. */
const ABORTED_HANDLERS_WAIT_MS = 2_000;

/**
 * The producer side on Redis. `enableOfflineQueue: false`: when Redis is down a call fails at once
 * instead of hanging the request (performance-and-reliability.md C1); the ledger row is already
 * committed and the reconciler enqueues it later. BullMQ needs Redis up while a Queue initialises,
 * so the first call waits for that at most FIRST_CONNECT_TIMEOUT_MS.
 */
export class BullMqJobQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly queues = new Map<QueueName, Queue>();

  constructor(private readonly settings: BullMqSettings) {}

  private async queue(name: QueueName): Promise<Queue> {
    const queue = this.queueInstance(name);
    let timer: NodeJS.Timeout | undefined;
    const unreachable = new Error(`Redis is unreachable (queue ${name})`);
    try {
      await Promise.race([
        queue.waitUntilReady(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(unreachable), FIRST_CONNECT_TIMEOUT_MS);
        }),
      ]);
    } catch (error) {
      // A failed initialisation never recovers inside BullMQ: drop the instance, the next call makes a new one.
      if (error !== unreachable && this.queues.get(name) === queue) {
        this.queues.delete(name);
        void queue.close().catch(() => undefined);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return queue;
  }

  private queueInstance(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection: {
          url: this.settings.url,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          retryStrategy,
          connectionName: `hearth-queue-${name}`,
        },
        prefix: this.settings.prefix,
        defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
      });
      queue.on('error', (error) => this.settings.onError?.(error));
      this.queues.set(name, queue);
    }
    return queue;
  }

  async enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options: EnqueueOptions): Promise<void> {
    await (
      await this.queue(queueOfJob(name))
    ).add(name, payload, {
      jobId: options.jobId,
      delay: options.delayMs && options.delayMs > 0 ? options.delayMs : undefined,
    });
  }

  async has(name: JobName, jobId: string): Promise<boolean> {
    const queue = await this.queue(queueOfJob(name));
    const state = await queue.getJobState(jobId);
    if (HELD_STATES.has(state)) return true;
    // A finished entry kept by Redis would make a new add with the same id a no-op: drop it.
    if (state === 'completed' || state === 'failed') await queue.remove(jobId).catch(() => 0);
    return false;
  }

  async ensureMaintenanceSchedule(everyMs: number): Promise<void> {
    const queue = await this.queue(QUEUE_NAMES.system);
    const existing = await queue.getJobScheduler(MAINTENANCE_SCHEDULER_ID);
    if (existing && existing.every === everyMs) return;
    await queue.upsertJobScheduler(
      MAINTENANCE_SCHEDULER_ID,
      { every: everyMs },
      { name: 'maintenance.scan', data: {}, opts: { removeOnComplete: true, removeOnFail: true } },
    );
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}

/**
 * The consumer side on Redis: one BullMQ Worker per consumed queue, on connection options (never
 * a shared ioredis instance, so close() releases everything; toolchain.md pitfall 2).
 */
export class BullMqJobConsumer implements JobConsumer {
  private readonly handlers = new Map<JobName, JobHandler<any>>();
  private readonly workers: Worker[] = [];
  private readonly controllers = new Set<AbortController>();

  constructor(
    private readonly settings: BullMqSettings,
    private readonly options: JobConsumerOptions,
  ) {}

  register<N extends JobName>(name: N, handler: JobHandler<N>): void {
    if (this.handlers.has(name)) throw new Error(`A handler for ${name} is already registered`);
    this.handlers.set(name, handler);
  }

  async start(): Promise<void> {
    for (const queueName of this.options.queues) {
      const worker = new Worker(queueName, (job, token) => this.process(job, token), {
        connection: {
          url: this.settings.url,
          maxRetriesPerRequest: null,
          retryStrategy,
          connectionName: `hearth-worker-${queueName}`,
        },
        prefix: this.settings.prefix,
        concurrency: this.options.concurrency ?? 4,
        autorun: false,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
        maxStalledCount: MAX_STALLED_COUNT,
        ...(this.options.lockDurationMs ? { lockDuration: this.options.lockDurationMs } : {}),
        ...(this.options.stalledIntervalMs ? { stalledInterval: this.options.stalledIntervalMs } : {}),
      });
      worker.on('error', (error) => this.settings.onError?.(error));
      worker.on('failed', (job, error) =>
        this.options.onError?.(error, { name: job?.name ?? '?', jobId: job?.id }),
      );
      this.workers.push(worker);
      void worker.run().catch((error) => this.settings.onError?.(error));
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  private async process(job: Job, token: string | undefined): Promise<void> {
    const name = job.name;
    if (!isJobName(name) || !this.handlers.has(name))
      throw new Error(`No handler for job ${name} in this worker`);
    const controller = new AbortController();
    this.controllers.add(controller);
    try {
      const outcome = await this.handlers.get(name)!(job.data, {
        name,
        jobId: job.id!,
        signal: controller.signal,
      });
      if (outcome) {
        // Same entry, delivered again later: the retry backoff chosen by the ledger.
        await job.moveToDelayed(outcome.redeliverAt, token);
        throw new DelayedError();
      }
    } finally {
      this.controllers.delete(controller);
    }
  }

  async close(graceMs = 10_000, onGraceExpired?: () => Promise<void>): Promise<boolean> {
    const closing = Promise.allSettled(this.workers.map((w) => w.close()));
    const finished = await settledWithin(closing, graceMs);
    if (!finished) {
      await onGraceExpired?.();
      for (const controller of this.controllers) controller.abort();
      // BullMQ's close(true) returns the graceful close already under way, which still waits for the
      // running handlers. Aborted handlers get a short while to return (BullMQ then closes cleanly);
      // one that ignores its signal is left behind, its connections dropped: its job was handed back.
      if (!(await settledWithin(closing, ABORTED_HANDLERS_WAIT_MS)))
        await Promise.allSettled(this.workers.map((w) => w.disconnect()));
    }
    return finished;
  }
}
