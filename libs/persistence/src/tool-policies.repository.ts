import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { ToolPoliciesTable } from './tables';

export type ToolPolicyRow = Selectable<ToolPoliciesTable>;

/** Named queries for the Workspace tool policy registry (docs/decisions.md "Settings"). */
export const toolPoliciesRepository = {
  async insert(tx: Tx, row: Insertable<ToolPoliciesTable>): Promise<ToolPolicyRow> {
    return tx.insertInto('tool_policies').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findInWorkspace(db: Executor, workspaceId: string, id: string): Promise<ToolPolicyRow | undefined> {
    return db
      .selectFrom('tool_policies')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The policy locked until the transaction ends: `update` to change or delete it, `share` to reference it. */
  async lockInWorkspace(
    tx: Tx,
    workspaceId: string,
    id: string,
    mode: 'update' | 'share',
  ): Promise<ToolPolicyRow | undefined> {
    const q = tx
      .selectFrom('tool_policies')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id);
    return (mode === 'update' ? q.forUpdate() : q.forShare()).executeTakeFirst();
  },

  async findByIds(db: Executor, workspaceId: string, ids: string[]): Promise<ToolPolicyRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('tool_policies')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', ids)
      .execute();
  },

  async findByName(db: Executor, workspaceId: string, name: string): Promise<ToolPolicyRow | undefined> {
    return db
      .selectFrom('tool_policies')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .executeTakeFirst();
  },

  async listOfWorkspace(db: Executor, workspaceId: string): Promise<ToolPolicyRow[]> {
    return db
      .selectFrom('tool_policies')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('id', 'asc')
      .execute();
  },

  async update(tx: Tx, id: string, changes: Updateable<ToolPoliciesTable>): Promise<ToolPolicyRow> {
    return tx
      .updateTable('tool_policies')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async delete(tx: Tx, id: string): Promise<void> {
    await tx.deleteFrom('tool_policies').where('id', '=', id).execute();
  },

  /** How many active Project overrides reference the policy (a delete is refused while any do). */
  async countActiveOverrides(db: Executor, id: string): Promise<number> {
    const row = await db
      .selectFrom('project_tool_policy_overrides')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('base_policy_id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};
