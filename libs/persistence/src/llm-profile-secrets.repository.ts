import type { Executor, Tx } from './database';

export interface StoredSecretRow {
  id: string;
  api_key_ciphertext: string;
}

/**
 * Named queries of the secrets rotation (docs/decisions.md "Secrets and the network guard"): every
 * profile's ciphertext, whatever its account or status, read in id order and rewritten in place.
 */
export const llmProfileSecretsRepository = {
  /** The next `limit` profiles after `afterId` (all of them from the start when null), locked for update. */
  async lockBatchAfter(tx: Tx, afterId: string | null, limit: number): Promise<StoredSecretRow[]> {
    let query = tx.selectFrom('llm_profiles').select(['id', 'api_key_ciphertext']).orderBy('id').limit(limit);
    if (afterId !== null) query = query.where('id', '>', afterId);
    return query.forUpdate().execute();
  },

  /**
   * Replaces a profile's ciphertext if it is still `expected`; false when it changed meanwhile. The
   * profile's `updated_at` is left alone: re-encrypting changes nothing a client can see.
   */
  async replaceCiphertext(db: Executor, id: string, expected: string, ciphertext: string): Promise<boolean> {
    const result = await db
      .updateTable('llm_profiles')
      .set({ api_key_ciphertext: ciphertext })
      .where('id', '=', id)
      .where('api_key_ciphertext', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async findCiphertext(db: Executor, id: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('llm_profiles')
      .select('api_key_ciphertext')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.api_key_ciphertext;
  },
};
