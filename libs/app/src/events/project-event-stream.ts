import type { Actor } from '@hearth/permissions';
import { type Db, projectEventsRepository } from '@hearth/persistence';
import { eventMatches, type ProjectEventFilter } from './project-event-filter';
import { type StreamedEvent, streamedEventOf } from './project-event-item';

/** Where a stream writes: the SSE writer of the API implements it. */
export interface EventStreamSink {
  /**
   * Writes consecutive events as ONE chunk; false when the client's buffer is full (the stream
   * waits for `onDrain`). The same array may be handed to many sinks (a shared batch): a sink may
   * cache what it builds from it, and must not modify it.
   */
  send(events: readonly StreamedEvent[]): boolean;
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
  /**
   * The events each filter selects, computed by the first stream with that filter and shared by
   * the others (so 1,000 streams with one filter filter once and write the same array).
   */
  selections?: Map<string, StreamedEvent[]>;
}

/** Read page size of a stream catching up from the database. */
const CATCH_UP_PAGE = 1000;
/** Batches buffered while a catch-up read is in flight; past this the stream simply re-reads. */
const MAX_PENDING_BATCHES = 64;

interface CatchUpPage {
  events: StreamedEvent[];
  /** The position the stream reaches once the page is sent. */
  end: number;
}

/** The key of a filter: streams with equal keys select the same events of a batch. */
function filterKey(filter: ProjectEventFilter): string {
  return `${filter.visibilities.join(',')}|${filter.types.join(',')}|${filter.sessionId ?? ''}`;
}

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
  /** Held by the hub while its caller's access is re-checked: nothing is written meanwhile. */
  private suspended = false;
  private pending: EventBatch[] = [];
  private closed = false;
  /** Resolves the catch-up's wait for a drain: true on drain, false when the stream closes. */
  private drainWaiter: ((drained: boolean) => void) | null = null;
  private readonly closeListeners: Array<() => void> = [];
  private readonly key: string;

  constructor(
    private readonly db: Db,
    readonly filter: ProjectEventFilter,
    after: number,
    private readonly onError: (error: unknown) => void,
    /** Who opened the stream: the hub re-checks its access (member removal, safety poll). */
    readonly actor: Actor | null = null,
  ) {
    this.position = after;
    this.key = filterKey(filter);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Starts writing to the sink: replays everything after the cursor, then follows the hub. */
  start(sink: EventStreamSink): void {
    this.sink = sink;
    sink.onClose(() => this.close());
    sink.onDrain(() => {
      if (this.drainWaiter) {
        const waiter = this.drainWaiter;
        this.drainWaiter = null;
        waiter(true);
        return;
      }
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
    if (this.closed || !this.sink || this.suspended) return;
    if (this.reading) {
      if (this.pending.length < MAX_PENDING_BATCHES) this.pending.push(batch);
      else this.dirty = true;
      return;
    }
    // A full client buffer: stop writing; the drain handler catches up from the database.
    if (this.blocked) return;
    if (!this.apply(batch)) void this.catchUp();
  }

  /**
   * Stops writing (the hub re-checks the caller's access after a member removal): batches are
   * ignored and a catch-up stops before its next page, until `resume` or `fail`.
   */
  suspend(): void {
    this.suspended = true;
  }

  /** Access confirmed: catches up from `position` on what was held back. */
  resume(): void {
    if (!this.suspended || this.closed) return;
    this.suspended = false;
    if (!this.blocked) void this.catchUp();
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

  /**
   * Applies a batch that follows on from `position` with one write; false when it leaves a gap
   * (read instead).
   */
  private apply(batch: EventBatch): boolean {
    if (batch.to <= this.position) return true;
    if (batch.from > this.position) return false;
    const events = batch.from === this.position ? this.selection(batch) : this.select(batch.events);
    if (events.length > 0 && !this.sink!.send(events)) this.blocked = true;
    this.position = batch.to;
    return true;
  }

  /** The batch's events this stream's filter selects, shared with streams of the same filter. */
  private selection(batch: EventBatch): StreamedEvent[] {
    let selections = batch.selections;
    if (!selections) {
      selections = new Map();
      batch.selections = selections;
    }
    let events = selections.get(this.key);
    if (!events) {
      events = this.select(batch.events);
      selections.set(this.key, events);
    }
    return events;
  }

  private select(events: StreamedEvent[]): StreamedEvent[] {
    return events.filter((e) => e.sequence > this.position && eventMatches(this.filter, e));
  }

  /**
   * Reads everything after `position` from Postgres. One read in flight per stream: a wake-up
   * during the read is buffered (or marks the stream dirty) and handled when the read ends.
   */
  private async catchUp(): Promise<void> {
    if (this.closed || !this.sink || this.suspended) return;
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
        if (this.halted) break;
        const pending = this.pending;
        this.pending = [];
        for (const batch of pending) {
          if (!this.apply(batch)) {
            this.dirty = true;
            break;
          }
          if (this.blocked) break;
        }
      } while (this.dirty && !this.halted);
    } catch (error) {
      this.onError(error);
      this.fail('internal_error', 'The event stream failed; reconnect with Last-Event-ID');
    } finally {
      this.reading = false;
      this.pending = [];
    }
  }

  /**
   * Sends every visible event up to the Project's committed head at the start of the read, a page
   * per write. The next page is read while this one is written and drained, and a full buffer
   * only pauses the loop (rows already read are never read again).
   */
  private async readToHead(): Promise<void> {
    // Every event up to the counter's committed value is committed too (commit order equals
    // sequence order), so reading up to it and then moving `position` there misses nothing.
    const head = await projectEventsRepository.lastSequence(this.db, this.filter.projectId);
    let next = this.position < head ? this.readPage(this.position, head) : null;
    while (next) {
      const page = await next;
      if (this.closed || this.suspended) return;
      next = page.end < head ? this.readPage(page.end, head) : null;
      this.position = page.end;
      if (page.events.length > 0 && !this.sink!.send(page.events) && !(await this.drained())) return;
    }
  }

  /** One page after `after` (at most up to `head`); the returned promise never rejects unhandled. */
  private readPage(after: number, head: number): Promise<CatchUpPage> {
    const page = projectEventsRepository
      .listStreamAfter(this.db, {
        projectId: this.filter.projectId,
        after,
        upTo: head,
        visibilities: this.filter.visibilities,
        types: this.filter.types,
        sessionId: this.filter.sessionId ?? undefined,
        limit: CATCH_UP_PAGE,
      })
      .then((rows) => ({
        events: rows.map(streamedEventOf),
        end: rows.length < CATCH_UP_PAGE ? head : rows[rows.length - 1].sequence,
      }));
    // A prefetched page may fail while the stream waits for a drain or after it closed: the
    // failure surfaces when (if) the page is awaited, never as an unhandled rejection.
    page.catch(() => undefined);
    return page;
  }

  /** Waits for the sink's drain; false if the stream closed meanwhile. */
  private drained(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.drainWaiter = resolve;
    });
  }

  private get halted(): boolean {
    return this.closed || this.blocked || this.suspended;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    const waiter = this.drainWaiter;
    this.drainWaiter = null;
    waiter?.(false);
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
