import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { NodeGraphsTable } from './tables';

export type NodeGraphRow = Selectable<NodeGraphsTable>;
/** A node graph without its document: what the list shows. */
export type NodeGraphSummaryRow = Omit<NodeGraphRow, 'graph'>;

/** Every column but `graph`, so a list never reads the documents (up to 1 MiB each). */
const SUMMARY_COLUMNS = [
  'id',
  'workspace_id',
  'project_id',
  'account_id',
  'name',
  'description',
  'graph_byte_count',
  'node_count',
  'edge_count',
  'version',
  'created_by_account_id',
  'created_by_client_id',
  'updated_by_account_id',
  'updated_by_client_id',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof NodeGraphSummaryRow>;

export interface NodeGraphListQuery {
  projectId: string;
  /** Keyset: only graphs with a smaller id (the list is newest first). */
  beforeId?: string;
  limit: number;
}

export type NodeGraphChanges = Pick<
  Updateable<NodeGraphsTable>,
  'name' | 'description' | 'graph' | 'graph_byte_count' | 'node_count' | 'edge_count'
> & {
  updated_by_account_id: string;
  updated_by_client_id: string;
  updated_at: number;
};

/** Named queries for Project node graphs. */
export const nodeGraphsRepository = {
  async insert(tx: Tx, row: Insertable<NodeGraphsTable>): Promise<NodeGraphRow> {
    return tx.insertInto('node_graphs').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findInProject(db: Executor, projectId: string, id: string): Promise<NodeGraphRow | undefined> {
    return db
      .selectFrom('node_graphs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The graph locked until the transaction ends, so writes of one graph serialise on its version. */
  async findInProjectForUpdate(tx: Tx, projectId: string, id: string): Promise<NodeGraphRow | undefined> {
    return tx
      .selectFrom('node_graphs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
  },

  /** Applies a change at `version` and moves to the next version; undefined if the version moved. */
  async update(
    tx: Tx,
    id: string,
    version: number,
    changes: NodeGraphChanges,
  ): Promise<NodeGraphRow | undefined> {
    return tx
      .updateTable('node_graphs')
      .set({ ...changes, version: version + 1 })
      .where('id', '=', id)
      .where('version', '=', version)
      .returningAll()
      .executeTakeFirst();
  },

  /** Deletes the graph at `version`; false if it is gone or its version moved. */
  async delete(tx: Tx, id: string, version: number): Promise<boolean> {
    const result = await tx
      .deleteFrom('node_graphs')
      .where('id', '=', id)
      .where('version', '=', version)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  },

  /** One page of a Project's graphs without their documents, newest first (ask for `limit + 1`). */
  async list(db: Executor, query: NodeGraphListQuery): Promise<NodeGraphSummaryRow[]> {
    let q = db.selectFrom('node_graphs').select(SUMMARY_COLUMNS).where('project_id', '=', query.projectId);
    if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
    return q.orderBy('id', 'desc').limit(query.limit).execute();
  },

  /** Every graph of a Project, oldest first (tests and maintenance; the API pages through `list`). */
  async listAllOfProject(db: Executor, projectId: string): Promise<NodeGraphRow[]> {
    return db
      .selectFrom('node_graphs')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'asc')
      .execute();
  },
};
