import type { CredentialRow } from './credentials.repository';
import { CredentialLookup } from './credentials-lookup';
import type { DatabaseHandle } from './database';

/**
 * The channel of the credential-change notifications: migration 20261126100000_credential_changes
 * notifies it from every statement that changes or deletes an account's status or role, a Client's
 * status, default flag or account, or an API key (the columns of a CredentialRow).
 */
export const CREDENTIAL_CHANGES_CHANNEL = 'hearth_credentials';

export interface CredentialCacheOptions {
  /** Most keys held; the oldest entry makes room for a new one. */
  maxEntries: number;
  /** An entry older than this is looked up again (a bound on a notification that never arrived). */
  maxAgeMs: number;
}

export interface CredentialCacheStats {
  hits: number;
  /** Lookups that went to the database (not cached, too old, or the cache not live). */
  misses: number;
  /** Times the whole cache was dropped (a notification, a local change, a LISTEN lost or regained). */
  invalidations: number;
}

const DEFAULT_OPTIONS: CredentialCacheOptions = { maxEntries: 10_000, maxAgeMs: 10_000 };

interface Entry {
  row: Readonly<CredentialRow>;
  cachedAt: number;
}

/**
 * The API-key lookup of every authenticated request, cached in the process while it is told of every
 * change: found keys are kept (never unknown ones), and the whole cache is dropped on each
 * notification of CREDENTIAL_CHANGES_CHANNEL, which the database sends when a statement that
 * changed a credential commits, whichever process or tool ran it. The process that makes a change
 * also drops its cache itself after the commit (`invalidate`), so the next request it serves sees the
 * change; another process sees it when the notification arrives, a few milliseconds later.
 *
 * The cache is used only while the notifications are being received: until LISTEN has run, and from
 * the moment its connection is lost until it is back, every lookup goes to the database
 * (CredentialLookup, whose answers come from a statement that started after the request arrived).
 * A lookup's answer is kept only if no invalidation happened since the lookup began, so an answer
 * read before a change cannot outlive the change's notification. Entries also expire after
 * `maxAgeMs`. The LISTEN starts with the first lookup (a worker process never opens it).
 */
export class CredentialCache {
  private entries = new Map<string, Entry>();
  private generation = 0;
  private live = false;
  private closed = false;
  private stopListening: (() => Promise<void>) | undefined;
  private readonly options: CredentialCacheOptions;
  readonly lookup: CredentialLookup;
  readonly stats: CredentialCacheStats = { hits: 0, misses: 0, invalidations: 0 };

  constructor(
    private readonly database: Pick<DatabaseHandle, 'db' | 'listen'>,
    options: Partial<CredentialCacheOptions> = {},
  ) {
    this.options = { ...DEFAULT_OPTIONS, ...options };
    this.lookup = new CredentialLookup(database.db);
  }

  /** Whether answers are being cached (the change notifications are being received). */
  get isLive(): boolean {
    return this.live;
  }

  /** The credential row of a key hash; undefined for an unknown or revoked key. */
  async find(keyHash: string): Promise<Readonly<CredentialRow> | undefined> {
    if (this.live) {
      const entry = this.entries.get(keyHash);
      if (entry && Date.now() - entry.cachedAt < this.options.maxAgeMs) {
        this.stats.hits++;
        return entry.row;
      }
    } else {
      this.startListening();
    }
    this.stats.misses++;
    const generation = this.generation;
    const row = await this.lookup.find(keyHash);
    if (row && this.live && generation === this.generation) this.remember(keyHash, row);
    return row;
  }

  /** Drops every entry, and every answer still being looked up (after a local credential change). */
  invalidate(): void {
    this.generation++;
    this.stats.invalidations++;
    this.entries.clear();
  }

  /** Stops listening and caching for good (the database handle also stops the LISTEN when it closes). */
  async close(): Promise<void> {
    this.closed = true;
    const stop = this.stopListening;
    this.stopListening = undefined;
    this.setLive(false);
    await stop?.();
  }

  private startListening(): void {
    if (this.stopListening || this.closed) return;
    this.stopListening = this.database.listen(CREDENTIAL_CHANGES_CHANNEL, {
      onNotification: () => this.invalidate(),
      onListening: (listening) => this.setLive(listening),
    });
  }

  private setLive(live: boolean): void {
    this.invalidate();
    this.live = live && !this.closed;
  }

  /** Caches a row as the newest entry (a Map keeps insertion order: the first key is the oldest). */
  private remember(keyHash: string, row: CredentialRow): void {
    this.entries.delete(keyHash);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(keyHash, { row: Object.freeze({ ...row }), cachedAt: Date.now() });
  }
}
