import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db, Executor, Tx } from './database';
import type { AssetVersionsTable, WorldbookEntriesTable, WorldbooksTable } from './tables';

export type WorldbookRow = Selectable<WorldbooksTable>;
export type WorldbookEntryRow = Selectable<WorldbookEntriesTable>;
/** A new or replacing entry, its JSON columns as values. */
export type WorldbookEntryRecord = Omit<
  Insertable<WorldbookEntriesTable>,
  'keys' | 'keys_secondary' | 'raw'
> & { keys: string[]; keys_secondary: string[]; raw: Record<string, unknown> };

export interface WorldbookListQuery {
  q?: string;
  sortBy: 'updated_at' | 'created_at' | 'name';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export interface WorldbookEntryListQuery {
  /** Lower-cased search text (matched against `search_text`). */
  q?: string;
  disable?: boolean;
  constant?: boolean;
  position?: number;
  sortBy: 'order' | 'updated_at' | 'uid';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** Rows per INSERT statement. */
const CHUNK = 1000;

const ENTRY_UPDATE_COLUMNS = [
  'keys',
  'keys_secondary',
  'content',
  'comment',
  'selective',
  'selective_logic',
  'constant',
  'position',
  'order',
  'depth',
  'role',
  'disable',
  'scan_depth',
  'case_sensitive',
  'match_whole_words',
  'exclude_recursion',
  'prevent_recursion',
  'delay_until_recursion',
  'outlet_name',
  'raw',
  'search_text',
  'updated_at',
] as const;

/** Named queries for worldbooks and their entries (docs/decisions.md "Worldbooks"). */
export const worldbooksRepository = {
  async insert(tx: Tx, row: Insertable<WorldbooksTable>): Promise<WorldbookRow> {
    return tx.insertInto('worldbooks').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /** Runs reads of a book and its entries on one snapshot (a repeatable-read transaction). */
  async readSnapshot<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
    return db.transaction().setIsolationLevel('repeatable read').execute(work);
  },

  async findOfAccount(db: Executor, accountId: string, id: string): Promise<WorldbookRow | undefined> {
    return db
      .selectFrom('worldbooks')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** Lock waits in this transaction give up after `ms` (55P03, answered 503 `resource_busy`). */
  async setLockTimeout(tx: Tx, ms: number): Promise<void> {
    await sql.raw(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(ms))}`).execute(tx);
  },

  /** The book locked until the transaction ends (every write locks it before comparing the version). */
  async lockOfAccount(tx: Tx, accountId: string, id: string): Promise<WorldbookRow | undefined> {
    return tx
      .selectFrom('worldbooks')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
  },

  async update(tx: Tx, id: string, changes: Updateable<WorldbooksTable>): Promise<WorldbookRow> {
    return tx
      .updateTable('worldbooks')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Deletes the book; its entries go with it (ON DELETE CASCADE). */
  async delete(tx: Tx, id: string): Promise<void> {
    await tx.deleteFrom('worldbooks').where('id', '=', id).execute();
  },

  async listOfAccount(
    db: Executor,
    accountId: string,
    query: WorldbookListQuery,
  ): Promise<{ rows: WorldbookRow[]; total: number }> {
    let base = db.selectFrom('worldbooks').where('account_id', '=', accountId);
    if (query.q) base = base.where(sql<boolean>`strpos(lower(name), ${query.q.toLowerCase()}) > 0`);
    const [rows, count] = await Promise.all([
      base
        .selectAll()
        // Names sort case-insensitively (then exactly, then by id).
        .orderBy(query.sortBy === 'name' ? sql`lower(name)` : query.sortBy, query.sortOrder)
        .orderBy(query.sortBy === 'name' ? 'name' : 'id', query.sortOrder)
        .orderBy('id', query.sortOrder)
        .limit(query.limit)
        .offset(query.offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },

  // ---- entries ----

  /**
   * Inserts entries, or replaces the stored ones of the same (worldbook, uid) keeping their id and
   * created_at. Each chunk is one JSON parameter expanded by `jsonb_populate_recordset` (Postgres parses
   * it once; far cheaper than thousands of bind parameters for a 5,000-entry book).
   */
  async upsertEntries(tx: Tx, rows: WorldbookEntryRecord[]): Promise<void> {
    const updates = sql.join(
      ENTRY_UPDATE_COLUMNS.map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`),
      sql`, `,
    );
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      await sql`
        INSERT INTO worldbook_entries
        SELECT * FROM jsonb_populate_recordset(NULL::worldbook_entries, ${JSON.stringify(chunk)}::jsonb)
        ON CONFLICT (worldbook_id, uid) DO UPDATE SET ${updates}`.execute(tx);
    }
  },

  async deleteEntriesByUid(tx: Tx, worldbookId: string, uids: number[]): Promise<void> {
    for (let i = 0; i < uids.length; i += CHUNK) {
      await tx
        .deleteFrom('worldbook_entries')
        .where('worldbook_id', '=', worldbookId)
        .where('uid', 'in', uids.slice(i, i + CHUNK))
        .execute();
    }
  },

  /** Every entry of a book, by uid. */
  async allEntries(db: Executor, worldbookId: string): Promise<WorldbookEntryRow[]> {
    return db
      .selectFrom('worldbook_entries')
      .selectAll()
      .where('worldbook_id', '=', worldbookId)
      .orderBy('uid', 'asc')
      .execute();
  },

  async countEntries(db: Executor, worldbookId: string): Promise<number> {
    const row = await db
      .selectFrom('worldbook_entries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('worldbook_id', '=', worldbookId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async listEntries(
    db: Executor,
    worldbookId: string,
    query: WorldbookEntryListQuery,
  ): Promise<{ rows: WorldbookEntryRow[]; total: number }> {
    let base = db.selectFrom('worldbook_entries').where('worldbook_id', '=', worldbookId);
    if (query.q) base = base.where(sql<boolean>`strpos(search_text, ${query.q}) > 0`);
    if (query.disable !== undefined) base = base.where('disable', '=', query.disable);
    if (query.constant !== undefined) base = base.where('constant', '=', query.constant);
    if (query.position !== undefined) base = base.where('position', '=', query.position);
    const [rows, count] = await Promise.all([
      base
        .selectAll()
        .orderBy(query.sortBy, query.sortOrder)
        .orderBy('uid', query.sortOrder)
        .limit(query.limit)
        .offset(query.offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },

  async findEntry(db: Executor, worldbookId: string, id: string): Promise<WorldbookEntryRow | undefined> {
    return db
      .selectFrom('worldbook_entries')
      .selectAll()
      .where('worldbook_id', '=', worldbookId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async findEntries(db: Executor, worldbookId: string, ids: string[]): Promise<WorldbookEntryRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('worldbook_entries')
      .selectAll()
      .where('worldbook_id', '=', worldbookId)
      .where('id', 'in', ids)
      .execute();
  },

  async maxUid(db: Executor, worldbookId: string): Promise<number | null> {
    const row = await db
      .selectFrom('worldbook_entries')
      .select(sql<number | null>`max(uid)`.as('max'))
      .where('worldbook_id', '=', worldbookId)
      .executeTakeFirstOrThrow();
    return row.max === null ? null : Number(row.max);
  },

  async insertEntry(tx: Tx, row: WorldbookEntryRecord): Promise<WorldbookEntryRow> {
    return tx
      .insertInto('worldbook_entries')
      .values({
        ...row,
        keys: JSON.stringify(row.keys),
        keys_secondary: JSON.stringify(row.keys_secondary),
        raw: JSON.stringify(row.raw),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /**
   * Writes the given rows' entry fields back (rows of one book, read and changed by the caller) in one
   * statement; `raw` is never changed by the entry routes, so it is not sent again.
   */
  async updateEntries(tx: Tx, rows: WorldbookEntryRow[]): Promise<void> {
    const columns = ENTRY_UPDATE_COLUMNS.filter((c) => c !== 'raw');
    for (let i = 0; i < rows.length; i += CHUNK) {
      const records = rows.slice(i, i + CHUNK).map((row) => {
        const record: Record<string, unknown> = { id: row.id };
        for (const column of columns) record[column] = row[column];
        return record;
      });
      await sql`
        UPDATE worldbook_entries AS w
        SET ${sql.join(
          columns.map((c) => sql`${sql.id(c)} = r.${sql.id(c)}`),
          sql`, `,
        )}
        FROM jsonb_populate_recordset(NULL::worldbook_entries, ${JSON.stringify(records)}::jsonb) AS r
        WHERE w.id = r.id`.execute(tx);
    }
  },

  async deleteEntries(tx: Tx, worldbookId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await tx
      .deleteFrom('worldbook_entries')
      .where('worldbook_id', '=', worldbookId)
      .where('id', 'in', ids)
      .execute();
  },

  // ---- versions (rows of asset_versions, asset_kind 'worldbook') ----

  /** Versions `from`..`to` of a book with their payloads, oldest first (a snapshot and its deltas). */
  async versionChain(
    db: Executor,
    worldbookId: string,
    from: number,
    to: number,
  ): Promise<Array<Selectable<AssetVersionsTable>>> {
    return db
      .selectFrom('asset_versions')
      .selectAll()
      .where('asset_id', '=', worldbookId)
      .where('asset_kind', '=', 'worldbook')
      .where('version_no', '>=', from)
      .where('version_no', '<=', to)
      .orderBy('version_no', 'asc')
      .execute();
  },

  /** A version of the book, without its payload. */
  async findVersionSummary(
    db: Executor,
    worldbookId: string,
    versionId: string,
  ): Promise<Omit<Selectable<AssetVersionsTable>, 'payload'> | undefined> {
    return db
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
      .where('asset_id', '=', worldbookId)
      .where('asset_kind', '=', 'worldbook')
      .where('id', '=', versionId)
      .executeTakeFirst();
  },
};
