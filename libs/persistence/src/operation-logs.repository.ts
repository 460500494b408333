import { sql, type Insertable, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Executor } from './database';
import type { Database, OperationLogsTable } from './tables';

export type OperationLogRow = Selectable<OperationLogsTable>;
export type NewOperationLog = Insertable<OperationLogsTable>;

/** The equality filters of spec 3 "Operation logs"; each one narrows, none widens. */
export const OPERATION_LOG_FILTERS = [
  'workspace_id',
  'project_id',
  'actor_account_id',
  'session_id',
  'floor_id',
  'run_id',
  'target_type',
  'target_id',
  'action',
  'actor_type',
  'status',
  'operation_group_id',
  'request_id',
] as const satisfies ReadonlyArray<keyof OperationLogsTable>;

export type OperationLogFilterField = (typeof OPERATION_LOG_FILTERS)[number];

export interface OperationLogQuery {
  /** Visibility: only rows of this account, always applied. */
  accountId: string;
  filters: Partial<Record<OperationLogFilterField, string>>;
}

export interface OperationLogPage {
  limit: number;
  offset: number;
  sortOrder: 'asc' | 'desc';
}

function scoped(
  db: Executor,
  query: OperationLogQuery,
): SelectQueryBuilder<Database, 'operation_logs', object> {
  let q = db.selectFrom('operation_logs').where('account_id', '=', query.accountId);
  for (const field of OPERATION_LOG_FILTERS) {
    const value = query.filters[field];
    if (value !== undefined) q = q.where(field, '=', value);
  }
  return q;
}

export const operationLogsRepository = {
  /**
   * Inserts a row. An actor's row that names no Workspace (library, account and Client writes: they
   * belong to no Project) gets the account's default Workspace, found in the same statement: spec 3
   * keeps `workspace_id` null only for old or system rows, and a Workspace filter must find them.
   */
  async insert(db: Executor, row: Insertable<OperationLogsTable>): Promise<OperationLogRow> {
    const workspaceId =
      row.workspace_id != null || row.actor_type === 'system' || !row.account_id
        ? (row.workspace_id ?? null)
        : sql<string | null>`(SELECT id FROM workspaces WHERE account_id = ${row.account_id} AND is_default)`;
    return db
      .insertInto('operation_logs')
      .values({ ...row, workspace_id: workspaceId })
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** One page of the visible rows, by time (ids are time-ordered and break ties). */
  async list(db: Executor, query: OperationLogQuery, page: OperationLogPage): Promise<OperationLogRow[]> {
    return scoped(db, query)
      .selectAll()
      .orderBy('created_at', page.sortOrder)
      .orderBy('id', page.sortOrder)
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  },

  async count(db: Executor, query: OperationLogQuery): Promise<number> {
    const row = await scoped(db, query)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /**
   * Whether a session exists and belongs to the account: the guard of
   * `GET /sessions/:id/operation-logs` (spec 3: 404 when missing or not of the account).
   */
  async sessionBelongsToAccount(db: Executor, sessionId: string, accountId: string): Promise<boolean> {
    const row = await db
      .selectFrom('sessions')
      .select('id')
      .where('id', '=', sessionId)
      .where('account_id', '=', accountId)
      .where('kind', '=', 'standard')
      .executeTakeFirst();
    return row !== undefined;
  },
};
