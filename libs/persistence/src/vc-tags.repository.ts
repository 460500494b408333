import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { VcTagsTable, VcTagTargetType } from './tables';

export type VcTagRow = Selectable<VcTagsTable>;

export interface VcTagListQuery {
  targetType?: VcTagTargetType;
  targetId?: string;
  sessionId?: string;
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** Named queries for VC tags (spec 3 "VC Tags"). */
export const vcTagsRepository = {
  async insert(tx: Tx, row: Insertable<VcTagsTable>): Promise<VcTagRow> {
    return tx.insertInto('vc_tags').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findOfAccount(db: Executor, accountId: string, id: string): Promise<VcTagRow | undefined> {
    return db
      .selectFrom('vc_tags')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async findByName(db: Executor, accountId: string, name: string): Promise<VcTagRow | undefined> {
    return db
      .selectFrom('vc_tags')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
  },

  /** Deletes the tag and returns it (undefined when it was not there, for example deleted concurrently). */
  async deleteOfAccount(tx: Tx, accountId: string, id: string): Promise<VcTagRow | undefined> {
    return tx
      .deleteFrom('vc_tags')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  },

  /** One page of the account's tags, by `created_at` then `id`, plus the total under the same filters. */
  async list(
    db: Executor,
    accountId: string,
    query: VcTagListQuery,
  ): Promise<{ rows: VcTagRow[]; total: number }> {
    let base = db.selectFrom('vc_tags').where('account_id', '=', accountId);
    if (query.targetType) base = base.where('target_type', '=', query.targetType);
    if (query.targetId !== undefined) base = base.where('target_id', '=', query.targetId);
    if (query.sessionId !== undefined) base = base.where('session_id', '=', query.sessionId);
    const [rows, count] = await Promise.all([
      base
        .selectAll()
        .orderBy('created_at', query.sortOrder)
        .orderBy('id', query.sortOrder)
        .limit(query.limit)
        .offset(query.offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },

  /**
   * Whether the account has a (standard) session with this id (an `asset_version` tag may name one;
   * a temporary conversation's session is not one).
   */
  async sessionExistsInAccount(db: Executor, accountId: string, sessionId: string): Promise<boolean> {
    const row = await db
      .selectFrom('sessions')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', sessionId)
      .where('kind', '=', 'standard')
      .executeTakeFirst();
    return row !== undefined;
  },
};
