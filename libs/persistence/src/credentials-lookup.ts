import { type CredentialRow, credentialsRepository } from './credentials.repository';
import type { Executor } from './database';
import { StatementFlights, type StatementFlightOptions } from './statement-flights';

export interface CredentialLookupOptions extends StatementFlightOptions {
  /** Most distinct keys in one statement. */
  maxBatch: number;
}

export interface CredentialLookupStats {
  /** Statements that looked up one key (findByKeyHash). */
  singles: number;
  /** Statements that looked up several keys (findByKeyHashes), and the keys they looked up. */
  batches: number;
  batchedKeys: number;
  /** Lookups answered (one per `find`). */
  lookups: number;
}

interface Waiter {
  resolve(row: CredentialRow | undefined): void;
  reject(error: unknown): void;
}

const DEFAULT_OPTIONS: CredentialLookupOptions = { maxBatch: 128, stallMs: 20, maxInFlight: 4 };

/**
 * The API-key lookup of every authenticated request, with the lookups of concurrent requests
 * coalesced: a key looked up while a statement is in flight waits for it to end and is then looked
 * up, together with every other key that arrived meanwhile, by the next statement
 * (credentialsRepository.findByKeyHashes). When nothing is in flight the statement starts at the end
 * of the current turn of the event loop (no timer), together with the keys of the requests read in
 * that turn; a lone key is looked up with findByKeyHash, so a lone request costs what it did.
 *
 * Nothing is cached: every answer comes from a statement that started after its `find` was called,
 * so a key revoked, or an account or Client disabled, before a request arrives is refused to it.
 * Requests with the same key waiting for the same statement share its row (one lookup per distinct
 * key). A failed statement fails each of its lookups with its error. One instance per database
 * handle (the guard's); never used inside a transaction.
 */
export class CredentialLookup {
  private queue = new Map<string, Waiter[]>();
  private readonly flights = new StatementFlights(
    () => this.options,
    () => this.pump(),
  );
  private immediate: NodeJS.Immediate | undefined;
  private readonly options: CredentialLookupOptions;
  readonly stats: CredentialLookupStats = { singles: 0, batches: 0, batchedKeys: 0, lookups: 0 };

  constructor(
    private readonly db: Executor,
    options: Partial<CredentialLookupOptions> = {},
  ) {
    this.options = { ...DEFAULT_OPTIONS, ...options };
  }

  /** The credential row of a key hash, as findByKeyHash answers it now. */
  find(keyHash: string): Promise<CredentialRow | undefined> {
    return new Promise<CredentialRow | undefined>((resolve, reject) => {
      const waiters = this.queue.get(keyHash);
      if (waiters) waiters.push({ resolve, reject });
      else this.queue.set(keyHash, [{ resolve, reject }]);
      if (this.flights.size > 0) this.pump();
      else this.schedule();
    });
  }

  /**
   * Starts statements for the queued keys. A key that finds nothing in flight starts its statement
   * at the end of the current turn of the event loop (setImmediate, no timer), so requests read from
   * the network in the same turn share it; the other keys wait for the statement in flight to end.
   */
  private schedule(): void {
    if (this.immediate || this.flights.size > 0) return;
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.size > 0) {
      if (!this.flights.mayStart()) {
        this.flights.watchStall();
        return;
      }
      const batch = this.take();
      this.flights.start({ startedAt: Date.now() }, this.run(batch));
    }
  }

  /** The next statement's keys: the queued ones in arrival order, at most maxBatch. */
  private take(): [string, Waiter[]][] {
    if (this.queue.size <= this.options.maxBatch) {
      const all = [...this.queue];
      this.queue = new Map();
      return all;
    }
    const batch: [string, Waiter[]][] = [];
    for (const entry of this.queue) {
      if (batch.length === this.options.maxBatch) break;
      batch.push(entry);
    }
    for (const [keyHash] of batch) this.queue.delete(keyHash);
    return batch;
  }

  private async run(batch: [string, Waiter[]][]): Promise<void> {
    let rows: Map<string, CredentialRow>;
    try {
      if (batch.length === 1) {
        this.stats.singles++;
        const [keyHash] = batch[0];
        const row = await credentialsRepository.findByKeyHash(this.db, keyHash);
        rows = new Map(row ? [[keyHash, row]] : []);
      } else {
        this.stats.batches++;
        this.stats.batchedKeys += batch.length;
        rows = await credentialsRepository.findByKeyHashes(
          this.db,
          batch.map(([keyHash]) => keyHash),
        );
      }
    } catch (error) {
      for (const [, waiters] of batch) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (const [keyHash, waiters] of batch) {
      const row = rows.get(keyHash);
      for (const waiter of waiters) {
        this.stats.lookups++;
        // Each request gets its own copy of the row.
        waiter.resolve(row && { ...row });
      }
    }
  }
}
