import { Kysely, PGliteDialect, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './tables';
import { CONNECTION_KEEPALIVE } from './connection-keepalive';
import { PreparingClient } from './prepared-statements';
import { StatementPipeline, type StatementExecutor } from './statement-pipeline';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Repositories take either the pool or a transaction as their first argument. */
export type Executor = Db | Tx;

const INT8_OID = 20;
// Millisecond timestamps, counters and sequences are bigint columns; they fit a JS number.
pg.types.setTypeParser(INT8_OID, (value: string) => Number(value));

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /**
   * Runs single statements pipelined on one connection of their own (see StatementPipeline), for
   * a writer that keeps a statement queued behind the running one (group commit). Embedded: the
   * database itself (one connection, nothing to pipeline).
   */
  pipeline: StatementExecutor;
  /**
   * LISTENs on a notification channel until the returned stop function is called (or the handle
   * closes). `onNotification` gets each notification's payload; `onListening` says whether
   * notifications are being received: true once LISTEN has run, false when the connection is lost
   * (notifications sent meanwhile are missed), true again after a reconnect.
   */
  listen(channel: string, handlers: ListenHandlers): () => Promise<void>;
  close(): Promise<void>;
}

export interface ListenHandlers {
  onNotification(payload: string): void;
  onListening(listening: boolean): void;
}

/** A pipelined statement running for longer than this sends the next ones to the pool. */
const PIPELINE_STALL_MS = 50;

/**
 * How long a pooled connection may sit idle before the pool closes it. pg's default is 10 s, shorter
 * than the pause between two turns of most chats (the user reads, then types): the next turn then
 * opened its connections again and prepared its statements anew, which took its time to first chunk
 * from ~15 ms to 40-170 ms (docs/decisions.md "Turn latency"). Five minutes covers a reader's pause;
 * the pool never holds more than `poolSize` connections either way.
 */
const POOL_IDLE_MS = 5 * 60_000;

/** First and longest wait before a lost LISTEN connection is opened again. */
const RELISTEN_DELAY_MS = { first: 250, max: 10_000 };

export interface DatabaseOptions {
  /** A postgres:// URL, or null for an embedded PGlite database. */
  url: string | null;
  /** PGlite data directory; `memory://` keeps it in memory. */
  dataDir?: string;
  poolSize?: number;
  applicationName?: string;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const applicationName = options.applicationName ?? 'hearth';
    const pool = new pg.Pool({
      connectionString: options.url,
      Client: PreparingClient,
      max: options.poolSize ?? 10,
      application_name: applicationName,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: POOL_IDLE_MS,
      ...CONNECTION_KEEPALIVE,
    });
    // An idle client that loses its server (restart, terminate) must not crash the process.
    pool.on('error', () => undefined);
    // Nor may a checked-out one: pg-pool drops its idle listener while a client is lent out, so a
    // server that goes away between two queries of a transaction would emit an unhandled 'error'.
    // The next query on that client fails ("not queryable", a 503) and the pool discards it on release.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const listeners = new Set<() => Promise<void>>();
    const url = options.url;
    const pipeline = new StatementPipeline({
      url,
      applicationName: `${applicationName} pipeline`,
      stallMs: PIPELINE_STALL_MS,
      overflow: db,
    });
    let closed = false;
    return {
      db,
      kind: 'postgres',
      pipeline,
      listen(channel, handlers) {
        // A closed handle opens no connection (a request still finishing during shutdown).
        if (closed) return async () => undefined;
        const stop = listenOnPostgres(url, `${applicationName} listen`, channel, handlers);
        const stopOnce = async () => {
          if (listeners.delete(stopOnce)) await stop();
        };
        listeners.add(stopOnce);
        return stopOnce;
      },
      close: async () => {
        closed = true;
        await Promise.all([...listeners].map((stop) => stop()));
        await pipeline.close();
        await db.destroy();
      },
    };
  }

  const { PGlite, types } = await import('@electric-sql/pglite');
  const pglite = new PGlite(options.dataDir ?? 'memory://', {
    parsers: { [types.INT8]: (value: string) => Number(value) },
  });
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    kind: 'pglite',
    pipeline: db,
    // One process holds the embedded database, so its notifications are never missed.
    listen(channel, handlers) {
      if (pglite.closed) return async () => undefined;
      const listening = pglite.listen(channel, (payload) => handlers.onNotification(payload));
      void listening.then(() => handlers.onListening(true)).catch(() => undefined);
      return async () => {
        handlers.onListening(false);
        if (pglite.closed) return;
        const unlisten = await listening.catch(() => undefined);
        await unlisten?.().catch(() => undefined);
      };
    },
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}

/**
 * A LISTEN on its own connection (never one of the pool's: a pooled connection is lent to others).
 * A lost connection is reported (`onListening(false)`) and opened again after a growing delay.
 */
function listenOnPostgres(
  url: string,
  applicationName: string,
  channel: string,
  handlers: ListenHandlers,
): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = RELISTEN_DELAY_MS.first;

  const lost = (from: pg.Client) => {
    if (client !== from) return;
    client = undefined;
    handlers.onListening(false);
    from.end().catch(() => undefined);
    if (stopped) return;
    retry = setTimeout(connect, delay);
    retry.unref();
    delay = Math.min(delay * 2, RELISTEN_DELAY_MS.max);
  };

  const connect = () => {
    retry = undefined;
    if (stopped) return;
    const next = new pg.Client({
      connectionString: url,
      application_name: applicationName,
      ...CONNECTION_KEEPALIVE,
    });
    client = next;
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.onNotification(message.payload ?? '');
    });
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    next
      .connect()
      .then(() => next.query(`LISTEN ${next.escapeIdentifier(channel)}`))
      .then(() => {
        if (client !== next) return;
        delay = RELISTEN_DELAY_MS.first;
        handlers.onListening(true);
      })
      .catch(() => lost(next));
  };

  connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const current = client;
    client = undefined;
    if (current) {
      handlers.onListening(false);
      await current.end().catch(() => undefined);
    }
  };
}
