import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import { presetRegexNamePattern, type PresetRegexListQuery } from './presets.repository';
import type { RegexProfilesTable } from './tables';

export type RegexProfileRow = Selectable<RegexProfilesTable>;

/** Named queries for regex profile head rows (db/migrations/20261122020000_presets_regex.ts). Deleted rows are never returned. */
export const regexProfilesRepository = {
  async insert(tx: Tx, row: Insertable<RegexProfilesTable>): Promise<RegexProfileRow> {
    return tx.insertInto('regex_profiles').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findOfAccount(db: Executor, accountId: string, id: string): Promise<RegexProfileRow | undefined> {
    return db
      .selectFrom('regex_profiles')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  },

  /** The profile locked for a write (a new version, a delete) until the transaction ends. */
  async lockOfAccount(tx: Tx, accountId: string, id: string): Promise<RegexProfileRow | undefined> {
    return tx
      .selectFrom('regex_profiles')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
  },

  async update(tx: Tx, id: string, changes: Updateable<RegexProfilesTable>): Promise<RegexProfileRow> {
    return tx
      .updateTable('regex_profiles')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async list(
    db: Executor,
    accountId: string,
    page: PresetRegexListQuery,
  ): Promise<{ rows: RegexProfileRow[]; total: number }> {
    let base = db
      .selectFrom('regex_profiles')
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null);
    if (page.q) base = base.where('name', 'ilike', presetRegexNamePattern(page.q));
    const [rows, count] = await Promise.all([
      (page.sortBy === 'name' ? base.orderBy(sql`lower(name)`, page.sortOrder) : base)
        .selectAll()
        .orderBy(page.sortBy, page.sortOrder)
        .orderBy('id', page.sortOrder)
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },
};
