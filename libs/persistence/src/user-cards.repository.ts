import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { UserCardsTable } from './tables';

export type UserCardRow = Selectable<UserCardsTable>;

export interface UserCardListQuery {
  status?: 'active' | 'disabled' | 'deleted';
  includeDeleted: boolean;
  /** Case-insensitive substring of the name or of `snapshot.description`. */
  keyword?: string;
  sortBy: 'updated_at' | 'created_at' | 'name';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** `%`, `_` and `\` taken literally inside an ILIKE pattern (backslash is Postgres' default escape). */
const likeContains = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Named queries for user cards (spec 3 "User cards"). "Live" means not soft-deleted. */
export const userCardsRepository = {
  async insert(tx: Tx, row: Insertable<UserCardsTable>): Promise<UserCardRow> {
    return tx.insertInto('user_cards').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /** A live card of the account. */
  async findLive(db: Executor, accountId: string, id: string): Promise<UserCardRow | undefined> {
    return db
      .selectFrom('user_cards')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  },

  /** A live card of the account, locked until the transaction ends. */
  async lockLive(tx: Tx, accountId: string, id: string): Promise<UserCardRow | undefined> {
    return tx
      .selectFrom('user_cards')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
  },

  /** The live cards of the account among `ids`, locked in id order (so two batches never deadlock). */
  async lockLiveMany(tx: Tx, accountId: string, ids: string[]): Promise<UserCardRow[]> {
    if (ids.length === 0) return [];
    return tx
      .selectFrom('user_cards')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .forUpdate()
      .execute();
  },

  /** The live card of the account with this name (names are unique among live cards). */
  async findLiveByName(db: Executor, accountId: string, name: string): Promise<UserCardRow | undefined> {
    return db
      .selectFrom('user_cards')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  },

  async update(tx: Tx, id: string, changes: Updateable<UserCardsTable>): Promise<UserCardRow> {
    return tx
      .updateTable('user_cards')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Sets the status of cards (already locked by the caller), bumping each one's revision. */
  async setStatusMany(
    tx: Tx,
    ids: string[],
    status: 'active' | 'disabled',
    now: number,
  ): Promise<UserCardRow[]> {
    if (ids.length === 0) return [];
    return tx
      .updateTable('user_cards')
      .set((eb) => ({ status, revision: eb('revision', '+', 1), updated_at: now }))
      .where('id', 'in', ids)
      .returningAll()
      .execute();
  },

  /** Soft-deletes cards (already locked by the caller), bumping each one's revision. */
  async softDeleteMany(tx: Tx, ids: string[], now: number): Promise<UserCardRow[]> {
    if (ids.length === 0) return [];
    return tx
      .updateTable('user_cards')
      .set((eb) => ({
        status: 'deleted',
        deleted_at: now,
        revision: eb('revision', '+', 1),
        updated_at: now,
      }))
      .where('id', 'in', ids)
      .returningAll()
      .execute();
  },

  /** One page of the account's cards plus the total under the same filters. */
  async list(
    db: Executor,
    accountId: string,
    query: UserCardListQuery,
  ): Promise<{ rows: UserCardRow[]; total: number }> {
    let base = db.selectFrom('user_cards').where('account_id', '=', accountId);
    if (query.status) base = base.where('status', '=', query.status);
    else if (!query.includeDeleted) base = base.where('deleted_at', 'is', null);
    if (query.keyword !== undefined) {
      const pattern = likeContains(query.keyword);
      base = base.where((eb) =>
        eb.or([eb('name', 'ilike', pattern), eb(sql<string>`snapshot->>'description'`, 'ilike', pattern)]),
      );
    }
    const [rows, count] = await Promise.all([
      base
        .selectAll()
        .orderBy(query.sortBy, query.sortOrder)
        .orderBy('id', query.sortOrder)
        .limit(query.limit)
        .offset(query.offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },
};
