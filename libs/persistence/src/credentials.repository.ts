import { compiledOnce } from './compiled-once';
import type { Executor } from './database';

export interface CredentialRow {
  key_id: string;
  client_id: string;
  client_status: 'active' | 'disabled';
  client_is_default: boolean;
  account_id: string;
  account_status: 'active' | 'disabled';
  account_role: 'admin' | 'user';
}

/** The key lookup of every authenticated request, compiled once (compiled-once.ts). */
const findByKeyHash = compiledOnce((db, keyHash: string) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('clients as c', 'c.id', 'k.client_id')
    .innerJoin('accounts as a', 'a.id', 'c.account_id')
    .select([
      'k.id as key_id',
      'c.id as client_id',
      'c.status as client_status',
      'c.is_default as client_is_default',
      'a.id as account_id',
      'a.status as account_status',
      'a.role as account_role',
    ])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null),
);

/** Named queries for API keys. Keys are looked up by their sha256 hash only. */
export const credentialsRepository = {
  async findByKeyHash(db: Executor, keyHash: string): Promise<CredentialRow | undefined> {
    const [row] = await findByKeyHash(db, keyHash);
    return row;
  },

  async insertKey(
    db: Executor,
    row: { id: string; client_id: string; key_hash: string; key_prefix: string; created_at: number },
  ): Promise<void> {
    await db
      .insertInto('api_keys')
      .values({ ...row, last_used_at: null, revoked_at: null })
      .onConflict((oc) => oc.column('key_hash').doNothing())
      .execute();
  },

  async countKeysOfClient(db: Executor, clientId: string): Promise<number> {
    const row = await db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('client_id', '=', clientId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};
