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
  queueOfJob,
} from './jobs';
import { settledWithin } from './settled-within';

interface Entry {
  name: JobName;
  jobId: string;
  payload: unknown;
  availableAt: number;
  state: 'waiting' | 'active';
}

type Listener = () => void;

/**
 * The embedded-mode broker: queue entries live in this process's memory, like BullMQ's in Redis
 * without persistence. The ledger rows in the database stay the truth; the reconciler re-enqueues
 * after a restart.
 */
export class InProcessJobBroker {
  private readonly entries = new Map<QueueName, Map<string, Entry>>();
  private readonly listeners = new Set<Listener>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private scheduleTimer: NodeJS.Timeout | null = null;
  closed = false;

  private queueEntries(queue: QueueName): Map<string, Entry> {
    let map = this.entries.get(queue);
    if (!map) this.entries.set(queue, (map = new Map()));
    return map;
  }

  add(name: JobName, jobId: string, payload: unknown, delayMs = 0): void {
    const map = this.queueEntries(queueOfJob(name));
    if (map.has(jobId)) return; // same as BullMQ: an id the queue holds is not added twice
    map.set(jobId, { name, jobId, payload, availableAt: Date.now() + delayMs, state: 'waiting' });
    this.wakeAt(delayMs);
  }

  has(name: JobName, jobId: string): boolean {
    return this.queueEntries(queueOfJob(name)).has(jobId);
  }

  /** Takes the first due entry of a queue, or null. */
  take(queue: QueueName): Entry | null {
    const now = Date.now();
    for (const entry of this.queueEntries(queue).values()) {
      if (entry.state === 'waiting' && entry.availableAt <= now) {
        entry.state = 'active';
        return entry;
      }
    }
    return null;
  }

  finish(queue: QueueName, jobId: string): void {
    this.queueEntries(queue).delete(jobId);
  }

  redeliver(queue: QueueName, jobId: string, at: number): void {
    const entry = this.queueEntries(queue).get(jobId);
    if (!entry) return;
    entry.state = 'waiting';
    entry.availableAt = at;
    this.wakeAt(Math.max(0, at - Date.now()));
  }

  onWork(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  schedule(everyMs: number): void {
    if (this.scheduleTimer || this.closed) return;
    const tick = () => this.add('maintenance.scan', `${MAINTENANCE_SCHEDULER_ID}-${Date.now()}`, {});
    this.scheduleTimer = setInterval(tick, everyMs);
    this.scheduleTimer.unref();
  }

  private wakeAt(delayMs: number): void {
    if (this.closed) return;
    const notify = () => {
      for (const listener of [...this.listeners]) listener();
    };
    if (delayMs <= 0) {
      queueMicrotask(notify);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      notify();
    }, delayMs + 1);
    timer.unref();
    this.timers.add(timer);
  }

  close(): void {
    this.closed = true;
    if (this.scheduleTimer) clearInterval(this.scheduleTimer);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.listeners.clear();
  }
}

export class InProcessJobQueue implements JobQueue {
  readonly kind = 'in-process' as const;
  constructor(readonly broker: InProcessJobBroker = new InProcessJobBroker()) {}

  async enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options: EnqueueOptions): Promise<void> {
    if (this.broker.closed) throw new Error('The job queue is closed');
    this.broker.add(name, options.jobId, payload, options.delayMs);
  }

  async has(name: JobName, jobId: string): Promise<boolean> {
    return this.broker.has(name, jobId);
  }

  async ensureMaintenanceSchedule(everyMs: number): Promise<void> {
    this.broker.schedule(everyMs);
  }

  async close(): Promise<void> {
    this.broker.close();
  }
}

/** Runs handlers in this process, `concurrency` at a time per queue. */
export class InProcessJobConsumer implements JobConsumer {
  private readonly handlers = new Map<JobName, JobHandler<any>>();
  private readonly active = new Map<Promise<void>, AbortController>();
  private readonly running = new Map<QueueName, number>();
  private stopListening: (() => void) | null = null;
  private closing = false;

  constructor(
    private readonly broker: InProcessJobBroker,
    private readonly options: JobConsumerOptions,
  ) {}

  register<N extends JobName>(name: N, handler: JobHandler<N>): void {
    if (this.handlers.has(name)) throw new Error(`A handler for ${name} is already registered`);
    this.handlers.set(name, handler);
  }

  async start(): Promise<void> {
    this.stopListening = this.broker.onWork(() => this.pump());
    this.pump();
  }

  private pump(): void {
    if (this.closing) return;
    const concurrency = this.options.concurrency ?? 4;
    for (const queue of this.options.queues) {
      while ((this.running.get(queue) ?? 0) < concurrency) {
        const entry = this.broker.take(queue);
        if (!entry) break;
        this.running.set(queue, (this.running.get(queue) ?? 0) + 1);
        const controller = new AbortController();
        const run = this.deliver(queue, entry, controller.signal).finally(() => {
          this.active.delete(run);
          this.running.set(queue, (this.running.get(queue) ?? 1) - 1);
          this.pump();
        });
        this.active.set(run, controller);
      }
    }
  }

  private async deliver(queue: QueueName, entry: Entry, signal: AbortSignal): Promise<void> {
    const handler = this.handlers.get(entry.name);
    try {
      if (!handler) throw new Error(`No handler for job ${entry.name} in this process`);
      const outcome = await handler(entry.payload as never, { name: entry.name, jobId: entry.jobId, signal });
      if (outcome && !this.closing) {
        this.broker.redeliver(queue, entry.jobId, outcome.redeliverAt);
        return;
      }
    } catch (error) {
      this.options.onError?.(error, { name: entry.name, jobId: entry.jobId });
    }
    this.broker.finish(queue, entry.jobId);
  }

  async close(graceMs = 10_000, onGraceExpired?: () => Promise<void>): Promise<boolean> {
    this.closing = true;
    this.stopListening?.();
    if (this.active.size === 0) return true;
    const finished = await settledWithin(Promise.allSettled([...this.active.keys()]), graceMs);
    if (!finished) {
      await onGraceExpired?.();
      for (const controller of this.active.values()) controller.abort();
    }
    return finished;
  }
}
