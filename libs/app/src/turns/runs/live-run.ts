import {
  generationRunsRepository,
  inTransaction,
  type Db,
  type GenerationRunRow,
  type Tx,
} from '@hearth/persistence';
import type { EventBus, JsonLogger } from '@hearth/platform';

/** The prefix of run ids. */
export const RUN_ID_PREFIX = 'run';

/** The bus channel that wakes reattached readers of one run; the message is the last stored sequence. */
export const runEventsChannel = (runId: string) => `hearth:run-events:${runId}`;
/** The bus channel every API process listens to for cancel requests; the message is a run id. */
export const RUN_CANCEL_CHANNEL = 'hearth:run-cancel';

/** Event types that end a run's stream. */
export const TERMINAL_RUN_EVENTS = new Set(['done', 'error']);

/** One sequenced run event, shaped like an SSE event (`id:` = sequence). */
export interface RunEvent {
  sequence: number;
  type: string;
  /** The JSON of the SSE `data:` line, serialised once. */
  data: string;
}

export type RunListener = (event: RunEvent) => void;

/** Spec 2 "Run event snapshot". */
export interface RunSnapshot {
  floor_id: string | null;
  run_id: string;
  run_type: string;
  status: string;
  phase: string;
  public_phase: string;
  phase_seq: number;
  attempt_no: number;
  detached: boolean;
  started_at: number;
  updated_at: number;
  completed_at: number | null;
  pending_output: {
    temp_id: string;
    attempt_no: number;
    state: 'pending' | 'streaming' | 'complete' | 'discarded';
    text: string;
    started_at: number;
    updated_at: number;
    error: { code: string; message: string } | null;
  };
  verifier: null;
  error: { code: string; message: string } | null;
  last_event_id: number;
}

/** How long stored events are batched before they are written (detached runs only). */
const FLUSH_DELAY_MS = 20;

/** The phase a client shows (`public_phase`): the internal phases without the bookkeeping ones. */
const PUBLIC_PHASE: Record<string, string> = {
  preparing: 'preparing',
  generating: 'generating',
  committing: 'generating',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** The snapshot of a run row (another process's run, or a finished one). */
export function snapshotOfRow(row: GenerationRunRow): RunSnapshot {
  const error = (row.error as RunSnapshot['error']) ?? null;
  const state =
    row.status === 'completed'
      ? 'complete'
      : row.status === 'running'
        ? row.pending_text
          ? 'streaming'
          : 'pending'
        : 'discarded';
  return {
    floor_id: row.floor_id,
    run_id: row.id,
    run_type: row.run_type,
    status: row.status,
    phase: row.phase,
    public_phase: PUBLIC_PHASE[row.phase] ?? row.phase,
    phase_seq: row.phase_seq,
    attempt_no: row.attempt_no,
    detached: row.detached,
    started_at: row.started_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
    pending_output: {
      temp_id: row.temp_id,
      attempt_no: row.attempt_no,
      state,
      text: row.pending_text,
      started_at: row.started_at,
      updated_at: row.updated_at,
      error,
    },
    verifier: null,
    error,
    last_event_id: row.last_event_seq,
  };
}

/**
 * A run while its process generates it: numbers its events, hands them to the attached client (the
 * SSE response that started it), and for a detached run stores them in batches for reattachment,
 * waking readers on other replicas through the bus after each batch.
 */
export class LiveRun {
  private sequence = 0;
  private listener: RunListener | null = null;
  private buffer: RunEvent[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private terminal = false;
  /** Set by `quiesce`: no more batch writes. */
  private holding = false;
  readonly controller = new AbortController();
  cancelReason: string | null = null;
  /** Resolves when the run has ended (committed, failed or cancelled) and its events are stored. */
  readonly finished: Promise<void>;
  private finish!: () => void;

  constructor(
    public row: GenerationRunRow,
    private readonly deps: { db: Db; bus: EventBus; logger: JsonLogger },
  ) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
  }

  get id(): string {
    return this.row.id;
  }

  get detached(): boolean {
    return this.row.detached;
  }

  get lastSequence(): number {
    return this.sequence;
  }

  /** The client that receives events as they happen (at most one: the response that started the run). */
  attach(listener: RunListener | null): void {
    this.listener = listener;
  }

  /** Numbers an event, sends it to the attached client at once, and queues it for storage when detached. */
  emit(type: string, payload: unknown): RunEvent {
    const event: RunEvent = { sequence: ++this.sequence, type, data: JSON.stringify(payload) };
    this.row.last_event_seq = event.sequence;
    if (this.listener) {
      try {
        this.listener(event);
      } catch {
        // A client that cannot be written to is the transport's problem, never the run's.
      }
    }
    if (this.row.detached) {
      this.buffer.push(event);
      if (!this.terminal && !this.holding && !this.flushTimer)
        this.flushTimer = setTimeout(() => {
          this.flushTimer = null;
          this.flushing = this.flushing.then(() => this.flush());
        }, FLUSH_DELAY_MS);
    }
    return event;
  }

  /**
   * Numbers a terminal event without sending it: it is stored by the terminal transaction
   * (`storeRemaining`) and sent with `deliver` once that transaction committed, or withdrawn with
   * `unstage` if it rolled back (nothing else emits while a run commits).
   */
  stage(type: string, payload: unknown): RunEvent {
    const event: RunEvent = { sequence: ++this.sequence, type, data: JSON.stringify(payload) };
    if (this.row.detached) this.buffer.push(event);
    return event;
  }

  deliver(events: RunEvent[]): void {
    for (const event of events) {
      this.row.last_event_seq = event.sequence;
      try {
        this.listener?.(event);
      } catch {
        // As in emit.
      }
    }
  }

  unstage(events: RunEvent[]): void {
    const drop = new Set(events);
    this.buffer = this.buffer.filter((e) => !drop.has(e));
    this.sequence -= events.length;
  }

  /** The run as spec 2's `run` event shows it. */
  snapshot(): RunSnapshot {
    return snapshotOfRow(this.row);
  }

  /** Updates the in-memory row (status, phase, text …) and bumps `phase_seq` when the phase changes. */
  update(patch: Partial<GenerationRunRow>): void {
    const now = Date.now();
    if (patch.phase && patch.phase !== this.row.phase) this.row.phase_seq += 1;
    this.row = { ...this.row, ...patch, updated_at: now };
  }

  cancel(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.cancelReason = reason;
    this.controller.abort(new Error(reason));
  }

  /**
   * Stops batch writes and waits for the one in flight: called before a terminal transaction opens
   * (a batch updates the run row, which the terminal transaction locks). Events emitted after this are
   * stored by the terminal transaction.
   */
  async quiesce(): Promise<void> {
    this.holding = true;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flushing;
  }

  /**
   * Stores what is still buffered inside the caller's (terminal) transaction (after `quiesce`): the
   * terminal event then commits with the run's final state, so a reader never sees a finished run
   * without its last event. Returns a function that puts the events back if that transaction rolls back.
   */
  async storeRemaining(tx: Tx): Promise<() => void> {
    if (!this.row.detached) return () => undefined;
    const events = this.buffer.splice(0);
    await generationRunsRepository.appendEvents(
      tx,
      events.map((e) => this.eventRow(e)),
    );
    return () => this.buffer.unshift(...events);
  }

  /** Called once the terminal transaction committed: wakes readers and releases waiters. */
  ended(): void {
    this.terminal = true;
    if (this.row.detached)
      void this.deps.bus
        .publish(runEventsChannel(this.id), String(this.sequence))
        .catch((error: unknown) => this.warn('run wake-up publish failed', error));
    this.finish();
  }

  private async flush(): Promise<void> {
    if (this.terminal || this.holding || this.buffer.length === 0) return;
    const events = this.buffer.splice(0);
    const last = events[events.length - 1].sequence;
    try {
      await inTransaction(this.deps.db, async ({ tx }) => {
        await generationRunsRepository.appendEvents(
          tx,
          events.map((e) => this.eventRow(e)),
        );
        await generationRunsRepository.updateRunning(tx, this.id, {
          pending_text: this.row.pending_text,
          pending_reasoning: this.row.pending_reasoning,
          phase: this.row.phase,
          phase_seq: this.row.phase_seq,
          last_event_seq: last,
          updated_at: Date.now(),
        });
      });
    } catch (error) {
      // Put them back: the next batch (or the terminal transaction) writes them in order.
      this.buffer.unshift(...events);
      this.warn('run events could not be stored; retrying with the next batch', error);
      return;
    }
    await this.deps.bus
      .publish(runEventsChannel(this.id), String(last))
      .catch((error: unknown) => this.warn('run wake-up publish failed', error));
  }

  private eventRow(event: RunEvent) {
    return {
      run_id: this.id,
      seq: event.sequence,
      type: event.type,
      data: event.data,
      created_at: Date.now(),
    };
  }

  private warn(msg: string, error: unknown): void {
    this.deps.logger.warn({ msg, run_id: this.id, error: String(error) }, 'LiveRun');
  }
}
