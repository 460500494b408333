import { type Db, projectEventsRepository } from '@hearth/persistence';
import { eventMatches, type ProjectEventFilter } from './project-event-filter';
import { type StreamedEvent, toStreamedEvent } from './project-event-item';

/** Where a stream writes: the SSE writer of the API implements it. */
export interface EventStreamSink {
  /** Writes one event; false when the client's buffer is full (the stream waits for `onDrain`). */
  send(event: StreamedEvent): boolean;
  /** Sends `event: error` with `{code, message}` and ends the response. */
  fail(code: string, message: string): void;
  /** Ends the response cleanly (shutdown); the client reconnects with `Last-Event-ID`. */
  end(): void;
  onDrain(listener: () => void): void;
  onClose(listener: () => void): void;
}

/**
 * Consecutive events of one Project read by the hub's shared reader: every committed event with
 * `from < sequence <= to` that is not `internal` is in `events`, in order.
 */
export interface EventBatch {
  from: number;
  to: number;
  events: StreamedEvent[];
}

/** Read page size of a stream catching up from the database. */
const CATCH_UP_PAGE = 500;
/** Batches buffered while a catch-up read is in flight; past this the stream simply re-reads. */
const MAX_PENDING_BATCHES = 64;

/**
 * One SSE connection on a Project's log. `position` is the highest sequence it has dealt with
 * (sent, or skipped by its filter). It catches up from Postgres (replay, a gap, a full client
 * buffer) and otherwise takes the hub's shared batches; the database is the only source, so replay
 * and live share this one path and a lost wake-up only delays.
 */
export class ProjectEventStream {
  private position: number;
  private sink: EventStreamSink | null = null;
  private reading = false;
  private dirty = false;
  private blocked = false;
  private pending: EventBatch[] = [];
  private closed = false;
  private readonly closeListeners: Array<() => void> = [];

  constructor(
    private readonly db: Db,
    readonly filter: ProjectEventFilter,
    after: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.position = after;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Starts writing to the sink: replays everything after the cursor, then follows the hub. */
  start(sink: EventStreamSink): void {
    this.sink = sink;
    sink.onClose(() => this.close());
    sink.onDrain(() => {
      if (!this.blocked || this.closed) return;
      this.blocked = false;
      void this.catchUp();
    });
    void this.catchUp();
  }

  onClosed(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** A batch from the hub's shared read. */
  deliver(batch: EventBatch): void {
    if (this.closed || !this.sink) return;
    if (this.reading) {
      if (this.pending.length < MAX_PENDING_BATCHES) this.pending.push(batch);
      else this.dirty = true;
      return;
    }
    // A full client buffer: stop writing; the drain handler catches up from the database.
    if (this.blocked) return;
    if (!this.apply(batch)) void this.catchUp();
  }

  /** Ends the stream cleanly (shutdown). */
  end(): void {
    if (this.closed) return;
    this.sink?.end();
    this.close();
  }

  fail(code: string, message: string): void {
    if (this.closed) return;
    this.sink?.fail(code, message);
    this.close();
  }

  /** Applies a batch that follows on from `position`; false when it leaves a gap (read instead). */
  private apply(batch: EventBatch): boolean {
    if (batch.to <= this.position) return true;
    if (batch.from > this.position) return false;
    for (const event of batch.events) {
      if (event.sequence <= this.position) continue;
      if (eventMatches(this.filter, event) && !this.sink!.send(event)) this.blocked = true;
    }
    this.position = batch.to;
    return true;
  }

  /**
   * Reads everything after `position` from Postgres. One read in flight per stream: a wake-up
   * during the read is buffered (or marks the stream dirty) and handled when the read ends.
   */
  private async catchUp(): Promise<void> {
    if (this.closed || !this.sink) return;
    if (this.reading) {
      this.dirty = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.dirty = false;
        this.pending = [];
        await this.readToHead();
        if (this.closed || this.blocked) break;
        const pending = this.pending;
        this.pending = [];
        for (const batch of pending) {
          if (!this.apply(batch)) {
            this.dirty = true;
            break;
          }
          if (this.blocked) break;
        }
      } while (this.dirty && !this.closed && !this.blocked);
    } catch (error) {
      this.onError(error);
      this.fail('internal_error', 'The event stream failed; reconnect with Last-Event-ID');
    } finally {
      this.reading = false;
      this.pending = [];
    }
  }

  /** Sends every visible event up to the Project's committed head at the start of the read. */
  private async readToHead(): Promise<void> {
    const { projectId } = this.filter;
    // Every event up to the counter's committed value is committed too (commit order equals
    // sequence order), so reading up to it and then moving `position` there misses nothing.
    const head = await projectEventsRepository.lastSequence(this.db, projectId);
    while (!this.closed && this.position < head) {
      const rows = await projectEventsRepository.listAfter(this.db, {
        projectId,
        after: this.position,
        upTo: head,
        visibilities: this.filter.visibilities,
        types: this.filter.types,
        sessionId: this.filter.sessionId ?? undefined,
        limit: CATCH_UP_PAGE,
      });
      if (this.closed) return;
      for (const row of rows) {
        const event = toStreamedEvent(row);
        this.position = event.sequence;
        if (!this.sink!.send(event)) {
          this.blocked = true;
          return;
        }
      }
      if (rows.length < CATCH_UP_PAGE) this.position = head;
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
