import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type {
  ProjectLlmProfileOverridesTable,
  ProjectMcpBindingsTable,
  ProjectToolPolicyOverridesTable,
} from './tables';

export type LlmProfileOverrideRow = Selectable<ProjectLlmProfileOverridesTable>;
export type McpBindingRow = Selectable<ProjectMcpBindingsTable>;
export type ToolPolicyOverrideRow = Selectable<ProjectToolPolicyOverridesTable>;

/**
 * Named queries for the three Project settings overrides (spec 1). Every upsert keeps the record's id
 * and created_at; its key is the Project (LLM override), the Project and server (MCP binding), or the
 * Project and base policy (tool policy override).
 */
export const projectSettingsRepository = {
  async findLlmOverride(db: Executor, projectId: string): Promise<LlmProfileOverrideRow | undefined> {
    return db
      .selectFrom('project_llm_profile_overrides')
      .selectAll()
      .where('project_id', '=', projectId)
      .executeTakeFirst();
  },

  async upsertLlmOverride(
    tx: Tx,
    row: Insertable<ProjectLlmProfileOverridesTable>,
  ): Promise<LlmProfileOverrideRow> {
    return tx
      .insertInto('project_llm_profile_overrides')
      .values(row)
      .onConflict((oc) =>
        oc.column('project_id').doUpdateSet({
          base_profile_id: row.base_profile_id,
          override_json: row.override_json,
          status: row.status,
          updated_at: row.updated_at,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async findMcpBinding(
    db: Executor,
    projectId: string,
    serverId: string,
  ): Promise<McpBindingRow | undefined> {
    return db
      .selectFrom('project_mcp_bindings')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('mcp_server_id', '=', serverId)
      .executeTakeFirst();
  },

  async upsertMcpBinding(tx: Tx, row: Insertable<ProjectMcpBindingsTable>): Promise<McpBindingRow> {
    return tx
      .insertInto('project_mcp_bindings')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['project_id', 'mcp_server_id']).doUpdateSet({
          status: row.status,
          allowed_tools: row.allowed_tools,
          config_override_json: row.config_override_json,
          updated_at: row.updated_at,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** A Project's MCP bindings in creation order. */
  async listMcpBindings(db: Executor, projectId: string): Promise<McpBindingRow[]> {
    return db
      .selectFrom('project_mcp_bindings')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'asc')
      .execute();
  },

  async findToolPolicyOverride(
    db: Executor,
    projectId: string,
    policyId: string,
  ): Promise<ToolPolicyOverrideRow | undefined> {
    return db
      .selectFrom('project_tool_policy_overrides')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('base_policy_id', '=', policyId)
      .executeTakeFirst();
  },

  async upsertToolPolicyOverride(
    tx: Tx,
    row: Insertable<ProjectToolPolicyOverridesTable>,
  ): Promise<ToolPolicyOverrideRow> {
    return tx
      .insertInto('project_tool_policy_overrides')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['project_id', 'base_policy_id']).doUpdateSet({
          override_json: row.override_json,
          status: row.status,
          updated_at: row.updated_at,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** A Project's tool policy overrides in creation order. */
  async listToolPolicyOverrides(db: Executor, projectId: string): Promise<ToolPolicyOverrideRow[]> {
    return db
      .selectFrom('project_tool_policy_overrides')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'asc')
      .execute();
  },

  /** Mirrors the overrides into the Project's `settings_override` (spec 1 Project field). */
  async writeProjectSettingsOverride(tx: Tx, projectId: string, json: string, now: number): Promise<void> {
    await tx
      .updateTable('projects')
      .set({ settings_override: json, updated_at: now })
      .where('id', '=', projectId)
      .execute();
  },
};
