import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { McpServersTable } from './tables';

export type McpServerRow = Selectable<McpServersTable>;

/** Named queries for the Workspace MCP server registry (docs/decisions.md "Settings"). */
export const mcpServersRepository = {
  async insert(tx: Tx, row: Insertable<McpServersTable>): Promise<McpServerRow> {
    return tx.insertInto('mcp_servers').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findInWorkspace(db: Executor, workspaceId: string, id: string): Promise<McpServerRow | undefined> {
    return db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The server locked until the transaction ends: `update` to change or delete it, `share` to bind it. */
  async lockInWorkspace(
    tx: Tx,
    workspaceId: string,
    id: string,
    mode: 'update' | 'share',
  ): Promise<McpServerRow | undefined> {
    const q = tx
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id);
    return (mode === 'update' ? q.forUpdate() : q.forShare()).executeTakeFirst();
  },

  async findByIds(db: Executor, workspaceId: string, ids: string[]): Promise<McpServerRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', ids)
      .execute();
  },

  async findByName(db: Executor, workspaceId: string, name: string): Promise<McpServerRow | undefined> {
    return db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .executeTakeFirst();
  },

  async listOfWorkspace(db: Executor, workspaceId: string): Promise<McpServerRow[]> {
    return db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('id', 'asc')
      .execute();
  },

  async update(tx: Tx, id: string, changes: Updateable<McpServersTable>): Promise<McpServerRow> {
    return tx
      .updateTable('mcp_servers')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async delete(tx: Tx, id: string): Promise<void> {
    await tx.deleteFrom('mcp_servers').where('id', '=', id).execute();
  },

  /** How many enabled Project bindings reference the server (a delete is refused while any do). */
  async countEnabledBindings(db: Executor, id: string): Promise<number> {
    const row = await db
      .selectFrom('project_mcp_bindings')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('mcp_server_id', '=', id)
      .where('status', '=', 'enabled')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};
