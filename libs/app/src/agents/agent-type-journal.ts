import { storedAgentDefaults, type AgentDefaults } from '@hearth/domain';
import type { AgentTypeRow } from '@hearth/persistence';
import type { OperationLogInput } from '../operation-logs/operation-log-writer';

/** What a log keeps of a `defaults` object: ids and names, no free-form bodies. */
export const agentDefaultsSummary = (d: AgentDefaults) => ({
  llm_profile_id: d.llm_profile_id,
  tool_policy_id: d.tool_policy_id,
  mcp_server_ids: d.mcp_bindings.map((m) => m.mcp_server_id),
  event_types: d.event_subscriptions.map((s) => s.type),
  allowed_output_targets: (d.grants.allowed_output_targets as string[] | undefined) ?? [],
  grant_keys: Object.keys(d.grants),
  metadata_keys: Object.keys(d.metadata),
});

/** The essential fields of a type for its operation logs. */
export const agentTypeRef = (t: AgentTypeRow) => ({
  key: t.key,
  name: t.name,
  scope_kind: t.scope_kind,
  status: t.status,
  defaults: agentDefaultsSummary(storedAgentDefaults(t.defaults)),
});

/** The common fields of an `agent_type.*` operation log (no Project: types live in a Workspace). */
export const agentTypeLog = (
  action: string,
  type: AgentTypeRow,
  rest: Omit<OperationLogInput, 'action'> = {},
): OperationLogInput => ({
  action,
  account_id: type.account_id,
  workspace_id: type.workspace_id,
  target_type: 'agent_type',
  target_id: type.id,
  ...rest,
});
