import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { AssetVersionFilesTable, PresetsTable } from './tables';

export type PresetRow = Selectable<PresetsTable>;

/**
 * How the preset and regex profile lists filter and sort (docs/decisions.md "Presets and regex profiles"):
 * `name` sorts case-insensitively, then by exact name; ties break by id.
 */
export interface PresetRegexListQuery {
  q?: string;
  sortBy: 'updated_at' | 'created_at' | 'name';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** `q` as an ILIKE pattern matching the substring literally (`%`, `_` and `\` escaped). */
export const presetRegexNamePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Named queries for preset head rows (db/migrations/20261122020000_presets_regex.ts). Deleted rows are never returned. */
export const presetsRepository = {
  async insert(tx: Tx, row: Insertable<PresetsTable>): Promise<PresetRow> {
    return tx.insertInto('presets').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findOfAccount(db: Executor, accountId: string, id: string): Promise<PresetRow | undefined> {
    return db
      .selectFrom('presets')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  },

  /** The preset locked for a write (a new version, a delete) until the transaction ends. */
  async lockOfAccount(tx: Tx, accountId: string, id: string): Promise<PresetRow | undefined> {
    return tx
      .selectFrom('presets')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
  },

  async update(tx: Tx, id: string, changes: Updateable<PresetsTable>): Promise<PresetRow> {
    return tx
      .updateTable('presets')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async list(
    db: Executor,
    accountId: string,
    page: PresetRegexListQuery,
  ): Promise<{ rows: PresetRow[]; total: number }> {
    let base = db.selectFrom('presets').where('account_id', '=', accountId).where('deleted_at', 'is', null);
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

/** The JSON text of asset versions as received (key order kept; see AssetVersionFilesTable). */
export const assetVersionFilesRepository = {
  async insert(tx: Tx, row: Insertable<AssetVersionFilesTable>): Promise<void> {
    await tx.insertInto('asset_version_files').values(row).execute();
  },

  async findBody(db: Executor, versionId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('asset_version_files')
      .select('body')
      .where('version_id', '=', versionId)
      .executeTakeFirst();
    return row?.body;
  },
};
