import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { DerivedOutputsTable } from './tables';

export type DerivedOutputRow = Selectable<DerivedOutputsTable>;

export interface DerivedOutputListQuery {
  projectId: string;
  domain?: string;
  status?: DerivedOutputRow['status'];
  sourceSessionId?: string;
  ownerAccountId?: string;
  /** Keyset: only entries with a smaller id (the list is newest first). */
  beforeId?: string;
  limit: number;
}

/** Named queries for derived outputs (spec 1 "Derived outputs"). */
export const derivedOutputsRepository = {
  async insert(tx: Tx, row: Insertable<DerivedOutputsTable>): Promise<DerivedOutputRow> {
    return tx.insertInto('derived_outputs').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findInProject(db: Executor, projectId: string, id: string): Promise<DerivedOutputRow | undefined> {
    return db
      .selectFrom('derived_outputs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The entry locked until the transaction ends, so concurrent updates of one entry serialise. */
  async findInProjectForUpdate(tx: Tx, projectId: string, id: string): Promise<DerivedOutputRow | undefined> {
    return tx
      .selectFrom('derived_outputs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
  },

  async update(
    tx: Tx,
    id: string,
    changes: Pick<Updateable<DerivedOutputsTable>, 'value' | 'value_byte_count' | 'status'> & {
      updated_at: number;
    },
  ): Promise<DerivedOutputRow> {
    return tx
      .updateTable('derived_outputs')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** One page of a Project's entries, newest first, `limit` rows (ask for one more to learn if more follow). */
  async list(db: Executor, query: DerivedOutputListQuery): Promise<DerivedOutputRow[]> {
    let q = db.selectFrom('derived_outputs').selectAll().where('project_id', '=', query.projectId);
    if (query.domain !== undefined) q = q.where('domain', '=', query.domain);
    if (query.status !== undefined) q = q.where('status', '=', query.status);
    if (query.sourceSessionId !== undefined) q = q.where('source_session_id', '=', query.sourceSessionId);
    if (query.ownerAccountId !== undefined) q = q.where('owner_account_id', '=', query.ownerAccountId);
    if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
    return q.orderBy('id', 'desc').limit(query.limit).execute();
  },

  /** Every entry of a Project, oldest first (tests and maintenance; the API pages through `list`). */
  async listAllOfProject(db: Executor, projectId: string): Promise<DerivedOutputRow[]> {
    return db
      .selectFrom('derived_outputs')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'asc')
      .execute();
  },
};

/** Where a source floor or page lives: enough to check it belongs to the entry's Project and session. */
export interface SourceScope {
  account_id: string;
  project_id: string;
  session_id: string;
  /** For a page: the floor it belongs to. */
  floor_id?: string;
}

/**
 * The floor and page lookups that derived outputs and inbox entries validate their sources with: the
 * account, Project and session a floor or page lives in (through its session).
 */
export const derivedOutputSourcesRepository = {
  async findFloorScope(db: Executor, floorId: string): Promise<SourceScope | undefined> {
    return db
      .selectFrom('floors')
      .innerJoin('sessions', 'sessions.id', 'floors.session_id')
      .select(['floors.account_id', 'sessions.project_id', 'floors.session_id'])
      .where('floors.id', '=', floorId)
      .executeTakeFirst();
  },

  async findPageScope(db: Executor, pageId: string): Promise<SourceScope | undefined> {
    return db
      .selectFrom('pages')
      .innerJoin('sessions', 'sessions.id', 'pages.session_id')
      .select(['pages.account_id', 'sessions.project_id', 'pages.session_id', 'pages.floor_id'])
      .where('pages.id', '=', pageId)
      .executeTakeFirst();
  },
};
