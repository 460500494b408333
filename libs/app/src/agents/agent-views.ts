import { effectiveAgentConfig, storedAgentDefaults } from '@hearth/domain';
import type { AgentBindingRow, AgentTypeRow, JobRow } from '@hearth/persistence';
import { bindingSettings } from './agent-binding-fields';

/** Every Agent Job status (spec 1 "States and transitions"). */
export const AGENT_JOB_STATUSES = [
  'pending',
  'leased',
  'running',
  'retry_waiting',
  'succeeded',
  'dead_letter',
  'cancelled',
] as const;
export type AgentJobStatus = (typeof AGENT_JOB_STATUSES)[number];

/** The binding fields that inherit the type's default while their column is null. */
export const AGENT_BINDING_OVERRIDE_FIELDS = [
  'llm_profile_id',
  'tool_policy_id',
  'mcp_bindings',
  'event_subscriptions',
  'grants',
] as const;

/** Spec 1 "Agent Type"; `defaults` is stored normalised (every field present). */
export const agentTypeView = (t: AgentTypeRow) => ({
  id: t.id,
  workspace_id: t.workspace_id,
  account_id: t.account_id,
  key: t.key,
  name: t.name,
  scope_kind: t.scope_kind,
  status: t.status,
  defaults: storedAgentDefaults(t.defaults),
  created_at: t.created_at,
  updated_at: t.updated_at,
});

/**
 * Spec 1 "Agent Binding", with the effective value of each override field (the type's current
 * default where the binding inherits it), `inherits` naming those fields, and the effective
 * metadata (the type's with the binding's keys over it). `status_reason` says why a binding is in
 * `error` (the `agent_override_expands_*` code it breaks), else null.
 */
export function agentBindingView(b: AgentBindingRow, type: AgentTypeRow) {
  const effective = effectiveAgentConfig(storedAgentDefaults(type.defaults), bindingSettings(b));
  return {
    id: b.id,
    workspace_id: b.workspace_id,
    project_id: b.project_id,
    account_id: b.account_id,
    agent_type_id: b.agent_type_id,
    status: b.status,
    status_reason: b.status_reason,
    scope_kind: b.scope_kind,
    llm_profile_id: effective.llm_profile_id,
    tool_policy_id: effective.tool_policy_id,
    mcp_bindings: effective.mcp_bindings,
    event_subscriptions: effective.event_subscriptions,
    grants: effective.grants,
    metadata: effective.metadata,
    inherits: AGENT_BINDING_OVERRIDE_FIELDS.filter((field) => b[field] === null),
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

/** Spec 1 "Agent Job" (the payload stays internal). */
export const agentJobView = (j: JobRow) => ({
  id: j.id,
  workspace_id: j.workspace_id,
  project_id: j.project_id,
  status: j.status,
  phase: j.phase,
  attempt_count: j.attempt_count,
  max_attempts: j.max_attempts,
  available_at: j.available_at,
  started_at: j.started_at,
  finished_at: j.finished_at,
  last_error: j.last_error,
  last_error_code: j.last_error_code,
  last_error_class: j.last_error_class,
  created_at: j.created_at,
  updated_at: j.updated_at,
  agent_type_id: j.agent_type_id,
  agent_binding_id: j.agent_binding_id,
  source_event_id: j.source_event_id,
  trigger_type: j.trigger_type,
  dry_run: j.dry_run ?? false,
  delivery_targets: j.delivery_targets ?? [],
  result: j.result ?? null,
});

export type AgentTypeView = ReturnType<typeof agentTypeView>;
export type AgentBindingView = ReturnType<typeof agentBindingView>;
export type AgentJobView = ReturnType<typeof agentJobView>;
