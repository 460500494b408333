import type { Json, NullableJson } from './core.table';

export type AgentScopeKindColumn = 'floor' | 'session' | 'project' | 'workspace';

/** An Agent Type (spec 1): a Workspace template; `defaults` is normalised (libs/domain/src/agents). */
export interface AgentTypesTable {
  id: string;
  workspace_id: string;
  account_id: string;
  key: string;
  name: string;
  scope_kind: AgentScopeKindColumn;
  status: 'active' | 'disabled';
  defaults: Json<Record<string, unknown>>;
  created_at: number;
  updated_at: number;
}

/**
 * An Agent Binding (spec 1): one Agent Type in one Project. A null override inherits the type's
 * current default; a set one only narrows it (migration 20261127100000).
 */
export interface AgentBindingsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  agent_type_id: string;
  status: 'enabled' | 'disabled' | 'error';
  scope_kind: AgentScopeKindColumn;
  llm_profile_id: string | null;
  tool_policy_id: string | null;
  mcp_bindings: NullableJson<unknown[]>;
  event_subscriptions: NullableJson<unknown[]>;
  grants: NullableJson<Record<string, unknown>>;
  metadata: Json<Record<string, unknown>>;
  /** Why the binding is in `error` (the rule it breaks), else null. */
  status_reason: string | null;
  created_at: number;
  updated_at: number;
}
