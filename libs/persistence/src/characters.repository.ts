import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { CharactersTable } from './tables';

export type CharacterRow = Selectable<CharactersTable>;

export type CharacterSortBy = 'updated_at' | 'created_at' | 'name';

export interface CharacterListQuery {
  /** Case-insensitive substring of the name. */
  q?: string;
  sortBy: CharacterSortBy;
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/**
 * Named queries for character head rows (docs/decisions.md "Characters"). Every query is scoped by
 * account and skips soft-deleted rows; the versions are in `assetVersionsRepository`.
 */
export const charactersRepository = {
  async insert(tx: Tx, row: Insertable<CharactersTable>): Promise<CharacterRow> {
    return tx.insertInto('characters').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /** A live (not deleted) character of the account. */
  async findOfAccount(db: Executor, accountId: string, id: string): Promise<CharacterRow | undefined> {
    return db
      .selectFrom('characters')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  },

  /** The live character locked until the transaction ends (before a new version or a delete). */
  async lockOfAccount(tx: Tx, accountId: string, id: string): Promise<CharacterRow | undefined> {
    return tx
      .selectFrom('characters')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
  },

  async list(
    db: Executor,
    accountId: string,
    query: CharacterListQuery,
  ): Promise<{ rows: CharacterRow[]; total: number }> {
    let base = db
      .selectFrom('characters')
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null);
    if (query.q !== undefined && query.q !== '') {
      base = base.where(sql<boolean>`strpos(lower(name), lower(${query.q})) > 0`);
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

  async update(tx: Tx, id: string, changes: Updateable<CharactersTable>): Promise<CharacterRow> {
    return tx
      .updateTable('characters')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** How many live characters the account owns (the account delete guard). */
  async countOfAccount(db: Executor, accountId: string): Promise<number> {
    const row = await db
      .selectFrom('characters')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};
