import { Kysely, PGliteDialect, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './tables';
import { PreparingClient } from './prepared-statements';

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
  close(): Promise<void>;
}

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
    const pool = new pg.Pool({
      connectionString: options.url,
      Client: PreparingClient,
      max: options.poolSize ?? 10,
      application_name: options.applicationName ?? 'hearth',
      connectionTimeoutMillis: 5000,
    });
    // An idle client that loses its server (restart, terminate) must not crash the process.
    pool.on('error', () => undefined);
    // Nor may a checked-out one: pg-pool drops its idle listener while a client is lent out, so a
    // server that goes away between two queries of a transaction would emit an unhandled 'error'.
    // The next query on that client fails ("not queryable", a 503) and the pool discards it on release.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
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
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}
