import { StatementFlights, type StatementFlightOptions } from '@hearth/persistence';

/**
 * What a group commit writes with: `one` writes a single item (its own statement), `many` writes
 * several in one statement and returns one result per item, in order, or throws when the statement
 * failed as a whole.
 */
export interface GroupCommitWriter<Item, Result> {
  /** Items with the same key never share a batch (e.g. one per Project, for gap-free sequences). */
  key(item: Item): string;
  one(item: Item): Promise<Result>;
  many(items: readonly Item[]): Promise<Result[]>;
}

export interface GroupCommitOptions extends StatementFlightOptions {
  /** Most items in one batch. */
  maxBatch: number;
  /**
   * Set when the writer's batch statements run pipelined (one connection, one after the other,
   * see StatementPipeline): while a single statement is in flight, the next batch is sent behind
   * it as soon as at least this many items, and at least as many as it carries, wait. So the
   * server goes from one batch to the next without waiting for this process to read the first
   * result, and batches do not shrink (each is worth its statement). Unset: the next batch waits
   * for the statement in flight to end (or to stall).
   */
  pipelineMinBatch?: number;
}

export interface GroupCommitStats {
  /** Statements run: single items, batches, and the single writes of fallbacks. */
  singles: number;
  batches: number;
  batchedItems: number;
  largestBatch: number;
  /** Batches whose statement failed as a whole, then written item by item. */
  fallbacks: number;
}

interface Pending<Item, Result> {
  item: Item;
  key: string;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items submitted while a write is in flight wait, and are written together by the
 * next statement (one round trip, one commit) as soon as it ends. When nothing is in flight an item
 * is written at once, alone, with the single-item statement, so a lone write costs what it did
 * without batching and waits for nothing.
 *
 * Items leave the queue in arrival order; one whose key is already in the batch being formed stays
 * queued (ahead of later items) for the next batch, so items of one key are written in arrival
 * order, one statement after the other. If a batch statement fails as a whole, its items are
 * written one by one, so one bad item never fails the others. One instance per process.
 */
export class GroupCommit<Item, Result> {
  private queue: Pending<Item, Result>[] = [];
  /** The statements in flight: when each started and the keys it writes. */
  private readonly flights = new StatementFlights<{ startedAt: number; keys: Set<string> }>(
    () => this.options,
    () => this.pump(),
  );
  readonly stats: GroupCommitStats = {
    singles: 0,
    batches: 0,
    batchedItems: 0,
    largestBatch: 0,
    fallbacks: 0,
  };

  private options: GroupCommitOptions;

  constructor(
    private readonly writer: GroupCommitWriter<Item, Result>,
    options: GroupCommitOptions,
  ) {
    this.options = { ...options };
  }

  /** Changes the options (tests: a long `stallMs` makes the batches of a held-up write predictable). */
  configure(options: Partial<GroupCommitOptions>): void {
    this.options = { ...this.options, ...options };
  }

  /** Items waiting for a statement. */
  get queued(): number {
    return this.queue.length;
  }

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ item, key: this.writer.key(item), resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      if (!this.flights.mayStart() && !this.mayQueueBehind()) {
        this.flights.watchStall();
        return;
      }
      const batch = this.take();
      // Every queued item's key is being written: the end of that statement pumps again.
      if (batch.length === 0) return;
      this.flights.start({ startedAt: Date.now(), keys: new Set(batch.map((p) => p.key)) }, this.run(batch));
    }
  }

  /** Pipelined writer: one statement in flight, and enough items wait to send a batch behind it. */
  private mayQueueBehind(): boolean {
    const { pipelineMinBatch } = this.options;
    if (pipelineMinBatch === undefined || this.flights.size !== 1) return false;
    const [inFlight] = this.flights.inFlight;
    return this.queue.length >= Math.max(pipelineMinBatch, inFlight.keys.size);
  }

  /**
   * The next batch: queued items in arrival order, at most one per key, at most maxBatch, none of a
   * key still being written by a statement in flight (so a key's items are written in arrival
   * order even when a stalled batch lets another one start).
   */
  private take(): Pending<Item, Result>[] {
    if (this.queue.length === 1 && this.flights.size === 0) return this.queue.splice(0, 1);
    const batch: Pending<Item, Result>[] = [];
    const rest: Pending<Item, Result>[] = [];
    const keys = new Set<string>();
    for (const flight of this.flights.inFlight) for (const key of flight.keys) keys.add(key);
    for (const pending of this.queue) {
      if (batch.length < this.options.maxBatch && !keys.has(pending.key)) batch.push(pending);
      else rest.push(pending);
      keys.add(pending.key);
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: Pending<Item, Result>[]): Promise<void> {
    if (batch.length === 1) return this.runOne(batch[0]);
    this.stats.batches++;
    this.stats.batchedItems += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    let results: Result[];
    try {
      results = await this.writer.many(batch.map((p) => p.item));
    } catch {
      // The statement failed as a whole (nothing of it committed): each item is written alone, so
      // an item that cannot be written fails by itself with its own error.
      this.stats.fallbacks++;
      await Promise.all(batch.map((p) => this.runOne(p)));
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i]));
  }

  private async runOne(pending: Pending<Item, Result>): Promise<void> {
    this.stats.singles++;
    try {
      pending.resolve(await this.writer.one(pending.item));
    } catch (error) {
      pending.reject(error);
    }
  }
}
