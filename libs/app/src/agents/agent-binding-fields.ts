import {
  checkBindingNarrows,
  DomainError,
  normaliseEventSubscriptions,
  normaliseGrants,
  normaliseMcpBindings,
  requireAgentJsonObject,
  scopeNarrows,
  storedAgentDefaults,
  type AgentEventSubscription,
  type AgentMcpBinding,
  type AgentScopeKind,
} from '@hearth/domain';
import {
  llmProfilesRepository,
  mcpServersRepository,
  toolPoliciesRepository,
  type AgentBindingRow,
  type AgentTypeRow,
  type Executor,
  type ProjectRow,
} from '@hearth/persistence';
import type { OperationLogInput } from '../operation-logs/operation-log-writer';

/** The writable fields of a binding as a request gives them; undefined: not given, null: inherit. */
export interface AgentBindingFieldsInput {
  scope_kind?: AgentScopeKind;
  llm_profile_id?: string | null;
  tool_policy_id?: string | null;
  mcp_bindings?: unknown;
  event_subscriptions?: unknown;
  grants?: unknown;
  /** The binding's own metadata (null: `{}`). */
  metadata?: unknown;
}

/** The same fields normalised, only those given. */
export interface AgentBindingColumns {
  scope_kind?: AgentScopeKind;
  llm_profile_id?: string | null;
  tool_policy_id?: string | null;
  mcp_bindings?: AgentMcpBinding[] | null;
  event_subscriptions?: AgentEventSubscription[] | null;
  grants?: Record<string, unknown> | null;
  metadata?: Record<string, unknown>;
}

/** A binding's complete settings (stored or about to be): what the enabled-binding checks judge. */
export interface AgentBindingSettings {
  scope_kind: AgentScopeKind;
  llm_profile_id: string | null;
  tool_policy_id: string | null;
  mcp_bindings: AgentMcpBinding[] | null;
  event_subscriptions: AgentEventSubscription[] | null;
  grants: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
}

/**
 * Normalises the given fields with the Agent Type rules (400 `validation_error`, 403
 * `agent_allowed_output_target_forbidden` for a forbidden target); null keeps its meaning
 * ("inherit the type's default").
 */
export function normaliseBindingFields(input: AgentBindingFieldsInput): AgentBindingColumns {
  const out: AgentBindingColumns = {};
  if (input.scope_kind !== undefined) out.scope_kind = input.scope_kind;
  if (input.llm_profile_id !== undefined) out.llm_profile_id = input.llm_profile_id;
  if (input.tool_policy_id !== undefined) out.tool_policy_id = input.tool_policy_id;
  if (input.mcp_bindings !== undefined)
    out.mcp_bindings =
      input.mcp_bindings === null ? null : normaliseMcpBindings('mcp_bindings', input.mcp_bindings);
  if (input.event_subscriptions !== undefined)
    out.event_subscriptions =
      input.event_subscriptions === null
        ? null
        : normaliseEventSubscriptions('event_subscriptions', input.event_subscriptions);
  if (input.grants !== undefined)
    out.grants = input.grants === null ? null : normaliseGrants('grants', input.grants);
  if (input.metadata !== undefined)
    out.metadata = input.metadata === null ? {} : requireAgentJsonObject('metadata', input.metadata);
  return out;
}

/**
 * A set `llm_profile_id` (of a binding, or of a type's defaults) must name a profile (not deleted)
 * of the owning account in the Workspace, else 404 `profile_not_found`; a set `tool_policy_id` a
 * tool policy of the Workspace, else 404 `tool_policy_not_found`; every `mcp_bindings[].mcp_server_id`
 * an MCP server of the Workspace, else 404 `mcp_server_not_found` (the codes of the settings routes;
 * another account's record answers like a missing one). Only the ids the request sets are checked
 * (`mcp_bindings`: not those of `knownMcpServerIds`, the ids already stored): a record deleted
 * later does not block other changes.
 */
export async function checkAgentReferences(
  db: Executor,
  owner: Pick<ProjectRow, 'account_id' | 'workspace_id'>,
  ids: {
    llm_profile_id?: string | null;
    tool_policy_id?: string | null;
    mcp_bindings?: AgentMcpBinding[] | null;
  },
  knownMcpServerIds: ReadonlyArray<string> = [],
): Promise<void> {
  if (ids.llm_profile_id) {
    const profile = await llmProfilesRepository.findUsableProfile(db, owner.account_id, ids.llm_profile_id);
    if (!profile || profile.workspace_id !== owner.workspace_id)
      throw new DomainError('profile_not_found', 404, 'LLM profile not found');
  }
  if (ids.tool_policy_id) {
    const policy = await toolPoliciesRepository.findInWorkspace(db, owner.workspace_id, ids.tool_policy_id);
    if (!policy) throw new DomainError('tool_policy_not_found', 404, 'Tool policy not found');
  }
  const serverIds = (ids.mcp_bindings ?? [])
    .map((m) => m.mcp_server_id)
    .filter((id) => !knownMcpServerIds.includes(id));
  if (serverIds.length > 0) {
    const found = new Set(
      (await mcpServersRepository.findByIds(db, owner.workspace_id, serverIds)).map((s) => s.id),
    );
    const missing = serverIds.find((id) => !found.has(id));
    if (missing !== undefined)
      throw new DomainError('mcp_server_not_found', 404, `MCP server ${missing} not found`, {
        mcp_server_id: missing,
      });
  }
}

/**
 * What an `enabled` binding must satisfy, in this order: its scope no wider than the type's (409
 * `agent_type_workspace_mismatch`), the type `active` (409 `agent_type_disabled`), and its set
 * overrides only narrowing the type's defaults (403 `agent_override_expands_*`).
 */
export function checkBindingCanBeEnabled(type: AgentTypeRow, settings: AgentBindingSettings): void {
  if (!scopeNarrows(settings.scope_kind, type.scope_kind))
    throw new DomainError(
      'agent_type_workspace_mismatch',
      409,
      `A binding's scope may not be wider than its Agent Type's (${settings.scope_kind} is wider than ${type.scope_kind})`,
      { scope_kind: settings.scope_kind, agent_type_scope_kind: type.scope_kind },
    );
  if (type.status !== 'active')
    throw new DomainError('agent_type_disabled', 409, 'The Agent Type is disabled');
  checkBindingNarrows(storedAgentDefaults(type.defaults), settings);
}

/** The settings of a stored binding with the given changes over them. */
export const bindingSettings = (
  binding: AgentBindingRow,
  columns: AgentBindingColumns = {},
): AgentBindingSettings => ({
  scope_kind: columns.scope_kind ?? binding.scope_kind,
  llm_profile_id: columns.llm_profile_id !== undefined ? columns.llm_profile_id : binding.llm_profile_id,
  tool_policy_id: columns.tool_policy_id !== undefined ? columns.tool_policy_id : binding.tool_policy_id,
  mcp_bindings:
    columns.mcp_bindings !== undefined
      ? columns.mcp_bindings
      : (binding.mcp_bindings as AgentMcpBinding[] | null),
  event_subscriptions:
    columns.event_subscriptions !== undefined
      ? columns.event_subscriptions
      : (binding.event_subscriptions as AgentEventSubscription[] | null),
  grants: columns.grants !== undefined ? columns.grants : binding.grants,
  metadata: columns.metadata ?? binding.metadata,
});

/** The essential fields of a binding for its operation logs (overrides by id and name only). */
export function agentBindingRef(row: AgentBindingRow) {
  const b = bindingSettings(row);
  return {
    status: row.status,
    status_reason: row.status_reason,
    scope_kind: b.scope_kind,
    llm_profile_id: b.llm_profile_id,
    tool_policy_id: b.tool_policy_id,
    mcp_server_ids: b.mcp_bindings?.map((m) => m.mcp_server_id) ?? null,
    event_types: b.event_subscriptions?.map((s) => s.type) ?? null,
    allowed_output_targets: b.grants
      ? ((b.grants.allowed_output_targets as string[] | undefined) ?? [])
      : null,
    metadata_keys: Object.keys(b.metadata),
  };
}

/** The common fields of an `agent_binding.*` operation log. */
export const agentBindingLog = (
  action: string,
  binding: AgentBindingRow,
  rest: Omit<OperationLogInput, 'action'> = {},
): OperationLogInput => ({
  action,
  account_id: binding.account_id,
  workspace_id: binding.workspace_id,
  project_id: binding.project_id,
  target_type: 'agent_binding',
  target_id: binding.id,
  ...rest,
});
