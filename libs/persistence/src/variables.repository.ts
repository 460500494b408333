import { sql, type ExpressionBuilder, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type {
  BranchesTable,
  Database,
  FloorsTable,
  PagesTable,
  SessionsTable,
  VariablePromotionsTable,
  VariableScopeName,
  VariableStagedWritesTable,
  VariablesTable,
  FloorVariableSnapshotsTable,
} from './tables';

export type VariableRow = Selectable<VariablesTable>;
export type StagedWriteRow = Selectable<VariableStagedWritesTable>;
export type VariablePromotionRow = Selectable<VariablePromotionsTable>;
export type FloorVariableSnapshotRow = Selectable<FloorVariableSnapshotsTable>;
export type NewVariable = Insertable<VariablesTable>;

export interface VariableListFilters {
  scope?: VariableScopeName;
  scopeId?: string;
  /** Branch scope only. */
  sessionId?: string;
  branchId?: string;
  key?: string;
}

export interface VariableListPaging {
  limit: number;
  offset: number;
  sortBy: 'updated_at' | 'key';
  sortOrder: 'asc' | 'desc';
}

/** A host of one scope: its scope and normalised scope_id. */
export interface VariableTarget {
  scope: VariableScopeName;
  scopeId: string;
}

/**
 * The variables the variable routes see: not those hosted in a temporary conversation (its turns'
 * floor and page variables), whose session no normal route shows.
 */
const notInTemporarySession = (eb: ExpressionBuilder<Database, 'variables'>) =>
  eb.or([
    eb('variables.session_id', 'is', null),
    eb.not(
      eb.exists(
        eb
          .selectFrom('sessions')
          .select('sessions.id')
          .whereRef('sessions.id', '=', 'variables.session_id')
          .where('sessions.kind', '=', 'temporary'),
      ),
    ),
  ]);

/**
 * Named queries for spec 2 variables (db/migrations/20261122090000_variables.ts). Every read is scoped
 * by account; hosts (sessions, branches, floors, pages) are looked up within the account too.
 */
export const variablesRepository = {
  /**
   * Inserts the variable or replaces the value of the one with the same (account, scope, scope_id,
   * key); id and created_at of an existing row are kept. `created` tells which happened.
   */
  async upsert(tx: Executor, row: NewVariable): Promise<{ variable: VariableRow; created: boolean }> {
    const result = await tx
      .insertInto('variables')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['account_id', 'scope', 'scope_id', 'key']).doUpdateSet({
          value: (eb) => eb.ref('excluded.value'),
          updated_at: (eb) => eb.ref('excluded.updated_at'),
        }),
      )
      .returningAll()
      .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
      .executeTakeFirstOrThrow();
    const { inserted, ...variable } = result;
    return { variable: variable as VariableRow, created: Boolean(inserted) };
  },

  /** A variable of the account; one hosted in a temporary conversation reads as missing. */
  async findById(db: Executor, accountId: string, id: string): Promise<VariableRow | undefined> {
    return db
      .selectFrom('variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where(notInTemporarySession)
      .executeTakeFirst();
  },

  async lockById(tx: Tx, accountId: string, id: string): Promise<VariableRow | undefined> {
    return tx
      .selectFrom('variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where(notInTemporarySession)
      .forUpdate()
      .executeTakeFirst();
  },

  async findByTarget(
    db: Executor,
    accountId: string,
    target: VariableTarget,
    key: string,
  ): Promise<VariableRow | undefined> {
    return db
      .selectFrom('variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('scope', '=', target.scope)
      .where('scope_id', '=', target.scopeId)
      .where('key', '=', key)
      .executeTakeFirst();
  },

  async delete(tx: Executor, id: string): Promise<void> {
    await tx.deleteFrom('variables').where('id', '=', id).execute();
  },

  /** Whether the account once had a variable of this id (deleted directly or with its host). */
  async hasTombstone(db: Executor, accountId: string, id: string): Promise<boolean> {
    const row = await db
      .selectFrom('variable_tombstones')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  },

  async list(
    db: Executor,
    accountId: string,
    filters: VariableListFilters,
    paging: VariableListPaging,
  ): Promise<{ items: VariableRow[]; total: number }> {
    let q = db.selectFrom('variables').where('account_id', '=', accountId).where(notInTemporarySession);
    if (filters.scope) q = q.where('scope', '=', filters.scope);
    if (filters.scopeId !== undefined) q = q.where('scope_id', '=', filters.scopeId);
    if (filters.sessionId !== undefined) q = q.where('session_id', '=', filters.sessionId);
    if (filters.branchId !== undefined) q = q.where('branch_id', '=', filters.branchId);
    if (filters.key !== undefined) q = q.where('key', '=', filters.key);
    const [items, count] = await Promise.all([
      q
        .selectAll()
        .orderBy(paging.sortBy, paging.sortOrder)
        .orderBy('id', paging.sortOrder)
        .limit(paging.limit)
        .offset(paging.offset)
        .execute(),
      q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items, total: Number(count.n) };
  },

  /** Every variable of the given hosts (resolve and the turn's views). */
  async listOfTargets(db: Executor, accountId: string, targets: VariableTarget[]): Promise<VariableRow[]> {
    if (targets.length === 0) return [];
    return db
      .selectFrom('variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .where((eb) =>
        eb.or(targets.map((t) => eb.and([eb('scope', '=', t.scope), eb('scope_id', '=', t.scopeId)]))),
      )
      .orderBy('key', 'asc')
      .execute();
  },

  // Hosts, always within the account.

  async findSession(
    db: Executor,
    accountId: string,
    sessionId: string,
  ): Promise<Selectable<SessionsTable> | undefined> {
    return db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', sessionId)
      .where('kind', '=', 'standard')
      .executeTakeFirst();
  },

  async findBranch(
    db: Executor,
    accountId: string,
    sessionId: string,
    branchId: string,
  ): Promise<Selectable<BranchesTable> | undefined> {
    return db
      .selectFrom('branches')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('session_id', '=', sessionId)
      .where('id', '=', branchId)
      .executeTakeFirst();
  },

  /** A floor of the account; `share` keeps its state from changing until the transaction ends. */
  async findFloor(
    db: Executor,
    accountId: string,
    floorId: string,
    options: { share?: boolean } = {},
  ): Promise<Selectable<FloorsTable> | undefined> {
    const q = db
      .selectFrom('floors')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', floorId);
    return (options.share ? q.forShare() : q).executeTakeFirst();
  },

  async findPage(
    db: Executor,
    accountId: string,
    pageId: string,
  ): Promise<Selectable<PagesTable> | undefined> {
    return db
      .selectFrom('pages')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', pageId)
      .executeTakeFirst();
  },

  // The page ledger.

  async nextStagedSeq(db: Executor, pageId: string): Promise<number> {
    const row = await db
      .selectFrom('variable_staged_writes')
      .select((eb) => eb.fn.max('seq').as('n'))
      .where('page_id', '=', pageId)
      .executeTakeFirst();
    return row?.n === null || row?.n === undefined ? 0 : Number(row.n) + 1;
  },

  async insertStagedWrites(
    tx: Executor,
    rows: Array<Insertable<VariableStagedWritesTable>>,
  ): Promise<StagedWriteRow[]> {
    if (rows.length === 0) return [];
    return tx.insertInto('variable_staged_writes').values(rows).returningAll().execute();
  },

  /** The page's ledger in write order; with `lock` the rows stay locked until the transaction ends. */
  async listStagedWrites(
    db: Executor,
    accountId: string,
    pageId: string,
    options: { lock?: boolean } = {},
  ): Promise<StagedWriteRow[]> {
    const q = db
      .selectFrom('variable_staged_writes')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('page_id', '=', pageId)
      .orderBy('seq', 'asc');
    return (options.lock ? q.forUpdate() : q).execute();
  },

  async resolveStagedWrite(
    tx: Executor,
    id: string,
    changes: { status: StagedWriteRow['status']; decision_reason: string | null; resolved_at: number },
  ): Promise<void> {
    await tx.updateTable('variable_staged_writes').set(changes).where('id', '=', id).execute();
  },

  async insertPromotion(
    tx: Executor,
    row: Insertable<VariablePromotionsTable>,
  ): Promise<VariablePromotionRow> {
    return tx.insertInto('variable_promotions').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async listPromotions(db: Executor, accountId: string, pageId: string): Promise<VariablePromotionRow[]> {
    return db
      .selectFrom('variable_promotions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('page_id', '=', pageId)
      .orderBy('id', 'asc')
      .execute();
  },

  // Floor snapshots of the local view.

  async upsertSnapshot(
    tx: Executor,
    row: Insertable<FloorVariableSnapshotsTable>,
  ): Promise<FloorVariableSnapshotRow> {
    return tx
      .insertInto('floor_variable_snapshots')
      .values(row)
      .onConflict((oc) =>
        oc.column('floor_id').doUpdateSet({
          local_view: (eb) => eb.ref('excluded.local_view'),
          updated_at: (eb) => eb.ref('excluded.updated_at'),
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async findSnapshot(
    db: Executor,
    accountId: string,
    floorId: string,
  ): Promise<FloorVariableSnapshotRow | undefined> {
    return db
      .selectFrom('floor_variable_snapshots')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('floor_id', '=', floorId)
      .executeTakeFirst();
  },
};
