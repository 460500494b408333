import { CompiledQuery } from 'kysely';
import { compiledOnce } from './compiled-once';
import type { Executor } from './database';
import { preparedStatement } from './prepared-statements';

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

/**
 * findByKeyHash for several keys at once (the coalesced lookups of concurrent requests,
 * credentials-lookup.ts): the same joins and conditions, one row per known, unrevoked key, with its
 * hash to tell the rows apart. $1 is the array of key hashes.
 */
const FIND_BY_KEY_HASHES = preparedStatement(`
SELECT k.key_hash, k.id AS key_id, c.id AS client_id, c.status AS client_status,
  c.is_default AS client_is_default, a.id AS account_id, a.status AS account_status, a.role AS account_role
FROM api_keys k
JOIN clients c ON c.id = k.client_id
JOIN accounts a ON a.id = c.account_id
WHERE k.key_hash = ANY($1::text[]) AND k.revoked_at IS NULL
`);

/** Named queries for API keys. Keys are looked up by their sha256 hash only. */
export const credentialsRepository = {
  async findByKeyHash(db: Executor, keyHash: string): Promise<CredentialRow | undefined> {
    const [row] = await findByKeyHash(db, keyHash);
    return row;
  },

  /** findByKeyHash of each hash, by one statement: the rows of the known keys, by hash. */
  async findByKeyHashes(db: Executor, keyHashes: readonly string[]): Promise<Map<string, CredentialRow>> {
    const result = await db.executeQuery<CredentialRow & { key_hash: string }>(
      CompiledQuery.raw(FIND_BY_KEY_HASHES, [[...keyHashes]]),
    );
    return new Map(result.rows.map(({ key_hash, ...row }) => [key_hash, row]));
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
