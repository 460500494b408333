import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { AssetKind, AssetVersionsTable } from './tables';

export type AssetVersionRow = Selectable<AssetVersionsTable>;

/**
 * Immutable versions of every library asset kind (docs/decisions.md "Library"). Callers lock the asset's
 * head row before `nextVersionNo` + `insert`, so version numbers of one asset never race.
 */
export const assetVersionsRepository = {
  async insert(tx: Tx, row: Insertable<AssetVersionsTable>): Promise<AssetVersionRow> {
    return tx.insertInto('asset_versions').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /** The number the next version of the asset gets (1 for a new asset). */
  async nextVersionNo(db: Executor, assetId: string): Promise<number> {
    const row = await db
      .selectFrom('asset_versions')
      .select(sql<number>`coalesce(max(version_no), 0) + 1`.as('next'))
      .where('asset_id', '=', assetId)
      .executeTakeFirstOrThrow();
    return Number(row.next);
  },

  /** A version of the account, of any kind unless `kind` is given. */
  async findOfAccount(
    db: Executor,
    accountId: string,
    id: string,
    kind?: AssetKind,
  ): Promise<AssetVersionRow | undefined> {
    let q = db
      .selectFrom('asset_versions')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId);
    if (kind) q = q.where('asset_kind', '=', kind);
    return q.executeTakeFirst();
  },

  async findOfAsset(db: Executor, assetId: string, id: string): Promise<AssetVersionRow | undefined> {
    return db
      .selectFrom('asset_versions')
      .selectAll()
      .where('asset_id', '=', assetId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async latestOfAsset(db: Executor, assetId: string): Promise<AssetVersionRow | undefined> {
    return db
      .selectFrom('asset_versions')
      .selectAll()
      .where('asset_id', '=', assetId)
      .orderBy('version_no', 'desc')
      .limit(1)
      .executeTakeFirst();
  },

  /** Versions of one asset, newest first unless `order` says otherwise, without payloads when `withPayload` is false. */
  async listOfAsset(
    db: Executor,
    assetId: string,
    page: { limit: number; offset: number; order?: 'asc' | 'desc' },
  ): Promise<{ rows: Omit<AssetVersionRow, 'payload'>[]; total: number }> {
    const [rows, count] = await Promise.all([
      db
        .selectFrom('asset_versions')
        .select([
          'id',
          'account_id',
          'asset_kind',
          'asset_id',
          'version_no',
          'name',
          'source_format',
          'change_kind',
          'created_by_operation_id',
          'created_at',
        ])
        .where('asset_id', '=', assetId)
        .orderBy('version_no', page.order ?? 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      db
        .selectFrom('asset_versions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('asset_id', '=', assetId)
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },

  /** Removes every version of an asset (the asset itself is being deleted in the same transaction). */
  async deleteOfAsset(tx: Tx, assetId: string): Promise<void> {
    await tx.deleteFrom('asset_versions').where('asset_id', '=', assetId).execute();
  },
};
