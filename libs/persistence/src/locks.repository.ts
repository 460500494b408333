import { sql } from 'kysely';
import type { Tx } from './database';

/** Well-known advisory lock keys. */
export const ADVISORY_LOCK = { bootstrap: 424242 } as const;

export const locksRepository = {
  /** Held until the transaction ends. */
  async advisoryXactLock(tx: Tx, key: number): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(${key})`.execute(tx);
  },
};
