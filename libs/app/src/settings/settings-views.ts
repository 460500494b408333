import type { LlmProfileOverrideRow, McpBindingRow, ToolPolicyOverrideRow } from '@hearth/persistence';

/** Spec 1 "Project LLM profile override". */
export const llmOverrideView = (o: LlmProfileOverrideRow) => ({
  id: o.id,
  workspace_id: o.workspace_id,
  project_id: o.project_id,
  base_profile_id: o.base_profile_id,
  override_json: o.override_json,
  status: o.status,
  created_at: o.created_at,
  updated_at: o.updated_at,
});

/** Spec 1 "Project MCP binding". */
export const mcpBindingView = (b: McpBindingRow) => ({
  id: b.id,
  workspace_id: b.workspace_id,
  project_id: b.project_id,
  mcp_server_id: b.mcp_server_id,
  status: b.status,
  allowed_tools: b.allowed_tools,
  config_override_json: b.config_override_json,
  created_at: b.created_at,
  updated_at: b.updated_at,
});

/** Spec 1 "Project tool policy override". */
export const toolPolicyOverrideView = (o: ToolPolicyOverrideRow) => ({
  id: o.id,
  workspace_id: o.workspace_id,
  project_id: o.project_id,
  base_policy_id: o.base_policy_id,
  override_json: o.override_json,
  status: o.status,
  created_at: o.created_at,
  updated_at: o.updated_at,
});

export type LlmOverrideView = ReturnType<typeof llmOverrideView>;
export type McpBindingView = ReturnType<typeof mcpBindingView>;
export type ToolPolicyOverrideView = ReturnType<typeof toolPolicyOverrideView>;
