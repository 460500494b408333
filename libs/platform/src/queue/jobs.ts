/**
 * Every queue, every job name and its payload type, in one place (ARCHITECTURE.md rule 9).
 *
 * Job data carries ids only: never secrets, prompts or message bodies (BullMQ stores job data in
 * clear text). A "ledger" job has a row in the Postgres `jobs` table whose id is also the queue
 * entry's id; the row is the job's truth and the queue entry only a delivery.
 */

/** Queues: one per family, so a worker can consume a family or not (`ENABLE_AGENT_RUNTIME_WORKER`). */
export const QUEUE_NAMES = {
  /** Operational jobs: the maintenance scan and the worker ping. Always consumed by workers. */
  system: 'system',
  /** `agent.run`; consumed only when `ENABLE_AGENT_RUNTIME_WORKER=true`. */
  agent: 'agent',
  /** Chat imports and exports, and account backup exports and restores (`backup.transfer`). */
  chat: 'chat',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** The payload of each job name, as it travels through the queue. */
export interface JobPayloads {
  /** The repeatable scan: reconciler, then later issues' TTL and cleanup steps. No ledger row. */
  'maintenance.scan': Record<string, never>;
  /** A real, tiny job that checks the path API -> queue -> worker -> ledger; its result is `{pong: true}`. */
  'system.ping': { job_id: string };
  /** An Agent Binding run (spec 1 "Agent Job"): RunAgentJobUseCase under the ledger, one per serial scope. */
  'agent.run': { job_id: string };
  /** An asynchronous chat import or export (spec 3); the handler lands with that issue. */
  'chat.transfer': { job_id: string };
  /** An account backup export or restore (spec 3 "Backup"): RunBackupJobUseCase under the ledger. */
  'backup.transfer': { job_id: string };
}

export type JobName = keyof JobPayloads;

/** Job names whose payload is `{job_id}` and whose truth is a `jobs` row. */
export type LedgerJobName = {
  [N in JobName]: JobPayloads[N] extends { job_id: string } ? N : never;
}[JobName];

export interface JobDefinition {
  queue: QueueName;
  /** True when a `jobs` row is the truth of each job of this name. */
  ledger: boolean;
  /** Attempts before `dead_letter` (ledger jobs). */
  maxAttempts: number;
  /** Retry delay: `baseMs * 2^(attempt-1)`, capped at `maxMs`. */
  backoff: { baseMs: number; maxMs: number };
  /**
   * True when this build ships the job's handler, so every worker that consumes its queue must
   * register exactly one (checked at worker start). A later issue flips it with its processor.
   */
  handled: boolean;
  /** A config switch that must be on for workers to consume the job's queue. */
  gate?: 'enableAgentRuntimeWorker';
}

export const JOB_DEFINITIONS: { readonly [N in JobName]: JobDefinition } = {
  'maintenance.scan': {
    queue: QUEUE_NAMES.system,
    ledger: false,
    maxAttempts: 1,
    backoff: { baseMs: 0, maxMs: 0 },
    handled: true,
  },
  'system.ping': {
    queue: QUEUE_NAMES.system,
    ledger: true,
    maxAttempts: 3,
    backoff: { baseMs: 1_000, maxMs: 60_000 },
    handled: true,
  },
  'agent.run': {
    queue: QUEUE_NAMES.agent,
    ledger: true,
    maxAttempts: 5,
    backoff: { baseMs: 5_000, maxMs: 300_000 },
    handled: true,
    gate: 'enableAgentRuntimeWorker',
  },
  'chat.transfer': {
    queue: QUEUE_NAMES.chat,
    ledger: true,
    maxAttempts: 3,
    backoff: { baseMs: 5_000, maxMs: 300_000 },
    handled: true,
  },
  'backup.transfer': {
    queue: QUEUE_NAMES.chat,
    ledger: true,
    maxAttempts: 3,
    backoff: { baseMs: 5_000, maxMs: 300_000 },
    handled: true,
  },
};

export const JOB_NAMES = Object.keys(JOB_DEFINITIONS) as JobName[];

export const isJobName = (name: string): name is JobName => Object.hasOwn(JOB_DEFINITIONS, name);

export const isLedgerJobName = (name: string): name is LedgerJobName =>
  isJobName(name) && JOB_DEFINITIONS[name].ledger;

export const queueOfJob = (name: JobName): QueueName => JOB_DEFINITIONS[name].queue;

/** The id of the repeatable maintenance scan (BullMQ job scheduler id, timer name in process). */
export const MAINTENANCE_SCHEDULER_ID = 'maintenance-scan';

export interface EnqueueOptions {
  /** The queue entry's id: the ledger row id for ledger jobs. Enqueueing an id the queue still holds does nothing. */
  jobId: string;
  /** Deliver no earlier than this many ms from now. */
  delayMs?: number;
}

/** What a handler may ask of the transport: deliver the same entry again at a time (retry backoff). */
export interface JobHandlerOutcome {
  redeliverAt: number;
}

export interface JobDelivery<N extends JobName = JobName> {
  name: N;
  jobId: string;
  /** Aborted when the consumer is closing and its grace period is over. */
  signal: AbortSignal;
}

export type JobHandler<N extends JobName = JobName> = (
  payload: JobPayloads[N],
  delivery: JobDelivery<N>,
) => Promise<JobHandlerOutcome | void>;

/** The producer side: used by the API and the worker (reconciler). */
export interface JobQueue {
  readonly kind: 'bullmq' | 'in-process';
  /** Typed enqueue: the payload must match the job name. */
  enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options: EnqueueOptions): Promise<void>;
  /** True while the queue still holds an entry with this id (waiting, delayed or active). */
  has(name: JobName, jobId: string): Promise<boolean>;
  /** Creates or refreshes the repeatable `maintenance.scan`; idempotent across replicas. */
  ensureMaintenanceSchedule(everyMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface JobConsumerOptions {
  /** Queues to consume. */
  queues: QueueName[];
  /** Jobs run at once per queue. */
  concurrency?: number;
  /** Called when a delivery fails outside the handler's own error handling. */
  onError?: (error: unknown, context: { name: string; jobId: string | undefined }) => void;
  /** BullMQ only: lock duration of an active entry (stall detection). */
  lockDurationMs?: number;
  /** BullMQ only: how often entries whose lock ran out are looked for and delivered again. */
  stalledIntervalMs?: number;
}

/** The consumer side: exactly one handler per job name, then start; close waits for running jobs. */
export interface JobConsumer {
  register<N extends JobName>(name: N, handler: JobHandler<N>): void;
  start(): Promise<void>;
  /**
   * Stops taking jobs and waits for running ones. After `graceMs` it calls `onGraceExpired` (hand
   * the jobs back), then aborts their signals and stops waiting; returns false in that case.
   */
  close(graceMs?: number, onGraceExpired?: () => Promise<void>): Promise<boolean>;
}

/** Typed enqueue of a ledger job: the queue payload is always `{job_id}` and the entry id is the row id. */
export function enqueueLedgerJob(
  queue: JobQueue,
  name: LedgerJobName,
  jobId: string,
  delayMs?: number,
): Promise<void> {
  return queue.enqueue(name, { job_id: jobId }, { jobId, delayMs });
}
