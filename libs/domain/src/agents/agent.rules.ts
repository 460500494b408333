import { DomainError, validationError } from '../errors';
import { serialiseValue } from '../derived-outputs/derived-output.rules';
import { isPlainObject, jsonEqual } from '../formats/format.rules';

/**
 * Agent Types and Agent Bindings (spec 1; docs/decisions.md "Agents"): the shape of a type's
 * `defaults`, the output-target lists, and the narrowing rule a binding must keep. Pure: no I/O.
 */
export const AGENT_SCOPE_KINDS = ['floor', 'session', 'project', 'workspace'] as const;
export type AgentScopeKind = (typeof AGENT_SCOPE_KINDS)[number];
export const AGENT_TYPE_STATUSES = ['active', 'disabled'] as const;
export const AGENT_BINDING_STATUSES = ['enabled', 'disabled', 'error'] as const;
export type AgentBindingStatus = (typeof AGENT_BINDING_STATUSES)[number];

export const AGENT_TYPE_KEY_MAX_CHARS = 120;
export const AGENT_TYPE_NAME_MAX_CHARS = 200;
/** Items of `mcp_bindings` and of `event_subscriptions` (a type's or a binding's). */
export const AGENT_LIST_MAX_ITEMS = 50;
/** Serialised UTF-8 size limit of `defaults` and of each binding override or metadata object. */
export const AGENT_JSON_MAX_BYTES = 64 * 1024;
export const EVENT_TYPE_MAX_CHARS = 120;

/** Targets an agent may never write: the main narrative and the live state (spec 1). */
export const FORBIDDEN_OUTPUT_TARGETS = [
  'session_messages',
  'floor',
  'page_active',
  'variable_live',
  'memory_live',
  'session_state_live_head',
] as const;
export const ALLOWED_OUTPUT_TARGETS = [
  'page_staged_write',
  'derived_output',
  'project_inbox',
  'session_state_proposal',
  'client_data',
  'plugin_data',
] as const;
export type AgentOutputTarget = (typeof ALLOWED_OUTPUT_TARGETS)[number];

/** What an agent run may read besides its trigger (`grants.reads`; docs/decisions.md "Agents"). */
export const AGENT_READS = ['project_events', 'transcript', 'derived_outputs'] as const;
export type AgentRead = (typeof AGENT_READS)[number];

export interface AgentMcpBinding {
  mcp_server_id: string;
  /** null: every tool of the server. */
  allowed_tools: string[] | null;
  config_override_json: Record<string, unknown> | null;
}

export interface AgentEventSubscription {
  /** A Project event type, e.g. `floor.committed`. */
  type: string;
  /** null: every event of the type; else the event document must contain it (JSON containment). */
  filter_json: Record<string, unknown> | null;
}

export interface AgentDefaults {
  llm_profile_id: string | null;
  tool_policy_id: string | null;
  mcp_bindings: AgentMcpBinding[];
  event_subscriptions: AgentEventSubscription[];
  grants: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/** The narrowing fields of a binding; undefined or null = inherit the type's. */
export interface AgentBindingOverrides {
  mcp_bindings?: AgentMcpBinding[] | null;
  event_subscriptions?: AgentEventSubscription[] | null;
  grants?: Record<string, unknown> | null;
}

interface FieldProblem {
  field: string;
  problems: string[];
}

const invalid = (field: string, problem: string) =>
  validationError(`${field}: ${problem}`, {
    fields: [{ field, problems: [problem] } satisfies FieldProblem],
  });

/**
 * Plain JSON that Postgres' jsonb takes (no NUL characters, no unpaired surrogates: the database
 * would refuse either, a 500), at most AGENT_JSON_MAX_BYTES serialised; else 400 `validation_error`.
 */
function requireJson(field: string, value: unknown): void {
  try {
    serialiseValue(value, AGENT_JSON_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw invalid(field, error.message.replace(/^value/, field));
  }
}

/**
 * A JSON object jsonb takes (requireJson), else 400 `validation_error` naming `field`: a type's
 * defaults and their parts, a binding's overrides and metadata, a run's `input_json`.
 */
export function requireAgentJsonObject(field: string, value: unknown): Record<string, unknown> {
  if (!isPlainObject(value)) throw invalid(field, 'must be a JSON object');
  requireJson(field, value);
  return value;
}

function optionalId(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > 200)
    throw invalid(field, 'must be a non-empty string or null');
  return value;
}

function requireList(field: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) throw invalid(field, 'must be an array');
  if (value.length > AGENT_LIST_MAX_ITEMS)
    throw invalid(field, `must hold at most ${AGENT_LIST_MAX_ITEMS} items`);
  requireJson(field, value);
  return value;
}

/** `mcp_bindings` items: one per server; `allowed_tools` deduplicated (null = unrestricted). */
export function normaliseMcpBindings(field: string, value: unknown): AgentMcpBinding[] {
  const seen = new Set<string>();
  return requireList(field, value).map((item, i) => {
    const at = `${field}[${i}]`;
    if (!isPlainObject(item)) throw invalid(at, 'must be a JSON object');
    const id = item.mcp_server_id;
    if (typeof id !== 'string' || id.length === 0 || id.length > 200)
      throw invalid(`${at}.mcp_server_id`, 'must be a non-empty string');
    if (seen.has(id)) throw invalid(`${at}.mcp_server_id`, `${id} is listed twice`);
    seen.add(id);
    let tools: string[] | null = null;
    if (item.allowed_tools !== undefined && item.allowed_tools !== null) {
      const list = requireList(`${at}.allowed_tools`, item.allowed_tools);
      if (list.some((t) => typeof t !== 'string' || t.length === 0 || t.length > 200))
        throw invalid(`${at}.allowed_tools`, 'must hold non-empty strings');
      tools = [...new Set(list as string[])];
    }
    const config =
      item.config_override_json === undefined || item.config_override_json === null
        ? null
        : requireAgentJsonObject(`${at}.config_override_json`, item.config_override_json);
    return { mcp_server_id: id, allowed_tools: tools, config_override_json: config };
  });
}

/** `event_subscriptions` items: `type` (an event type) and `filter_json` (object or null). */
export function normaliseEventSubscriptions(field: string, value: unknown): AgentEventSubscription[] {
  return requireList(field, value).map((item, i) => {
    const at = `${field}[${i}]`;
    if (!isPlainObject(item)) throw invalid(at, 'must be a JSON object');
    const type = item.type;
    if (typeof type !== 'string' || type.length === 0 || type.length > EVENT_TYPE_MAX_CHARS)
      throw invalid(`${at}.type`, `must be an event type of 1-${EVENT_TYPE_MAX_CHARS} characters`);
    const filter =
      item.filter_json === undefined || item.filter_json === null
        ? null
        : requireAgentJsonObject(`${at}.filter_json`, item.filter_json);
    return { type, filter_json: filter };
  });
}

/**
 * `grants`: free-form, but `allowed_output_targets` (a list of the spec's targets: a forbidden one
 * answers 403 `agent_allowed_output_target_forbidden`, an unknown one 400) and `reads` (a list of
 * AGENT_READS) are checked, and deduplicated.
 */
export function normaliseGrants(field: string, value: unknown): Record<string, unknown> {
  const grants = { ...requireAgentJsonObject(field, value) };
  if (grants.allowed_output_targets !== undefined) {
    const list = requireList(`${field}.allowed_output_targets`, grants.allowed_output_targets);
    const forbidden = list.filter((t) => (FORBIDDEN_OUTPUT_TARGETS as readonly unknown[]).includes(t));
    if (forbidden.length > 0)
      throw new DomainError(
        'agent_allowed_output_target_forbidden',
        403,
        `Agents may not write ${forbidden.join(', ')}: allowed output targets are ${ALLOWED_OUTPUT_TARGETS.join(', ')}`,
        { forbidden_targets: forbidden },
      );
    const unknown = list.filter((t) => !(ALLOWED_OUTPUT_TARGETS as readonly unknown[]).includes(t));
    if (unknown.length > 0)
      throw invalid(
        `${field}.allowed_output_targets`,
        `unknown targets ${unknown.map(String).join(', ')}; allowed: ${ALLOWED_OUTPUT_TARGETS.join(', ')}`,
      );
    grants.allowed_output_targets = [...new Set(list as string[])];
  }
  if (grants.reads !== undefined) {
    const list = requireList(`${field}.reads`, grants.reads);
    const unknown = list.filter((r) => !(AGENT_READS as readonly unknown[]).includes(r));
    if (unknown.length > 0)
      throw invalid(
        `${field}.reads`,
        `unknown reads ${unknown.map(String).join(', ')}; allowed: ${AGENT_READS.join(', ')}`,
      );
    grants.reads = [...new Set(list as string[])];
  }
  return grants;
}

/** A type's `defaults` with every field present ("omitted fields take empty defaults"). */
export function normaliseAgentDefaults(value: unknown): AgentDefaults {
  const input = value === undefined || value === null ? {} : requireAgentJsonObject('defaults', value);
  const known = [
    'llm_profile_id',
    'tool_policy_id',
    'mcp_bindings',
    'event_subscriptions',
    'grants',
    'metadata',
  ];
  const extra = Object.keys(input).filter((k) => !known.includes(k));
  if (extra.length > 0) throw invalid('defaults', `unknown fields ${extra.join(', ')}`);
  return {
    llm_profile_id: optionalId('defaults.llm_profile_id', input.llm_profile_id),
    tool_policy_id: optionalId('defaults.tool_policy_id', input.tool_policy_id),
    mcp_bindings: normaliseMcpBindings('defaults.mcp_bindings', input.mcp_bindings ?? []),
    event_subscriptions: normaliseEventSubscriptions(
      'defaults.event_subscriptions',
      input.event_subscriptions ?? [],
    ),
    grants: normaliseGrants('defaults.grants', input.grants ?? {}),
    metadata: requireAgentJsonObject('defaults.metadata', input.metadata ?? {}),
  };
}

/** Reads a stored `defaults` object (normalised when written). */
export const storedAgentDefaults = (value: unknown): AgentDefaults => value as AgentDefaults;

/**
 * True when `narrow` grants no more than `wide`: an object only keys of `wide`, each narrower; an
 * array only items of `wide`; any other value equal. (`jsonContains(wide, narrow)` read backwards.)
 */
export function jsonNarrows(narrow: unknown, wide: unknown): boolean {
  if (Array.isArray(narrow))
    return Array.isArray(wide) && narrow.every((item) => wide.some((w) => jsonEqual(item, w)));
  if (isPlainObject(narrow))
    return (
      isPlainObject(wide) &&
      Object.keys(narrow).every((k) => Object.hasOwn(wide, k) && jsonNarrows(narrow[k], wide[k]))
    );
  return jsonEqual(narrow, wide);
}

/**
 * JSON containment as Postgres' `@>` (the event trigger's filter): objects contain every key of the
 * filter with a contained value, arrays contain every item of the filter, scalars are equal.
 */
export function jsonContains(doc: unknown, filter: unknown): boolean {
  if (Array.isArray(filter))
    return Array.isArray(doc) && filter.every((f) => doc.some((d) => jsonContains(d, f)));
  if (isPlainObject(filter))
    return (
      isPlainObject(doc) &&
      Object.keys(filter).every((k) => Object.hasOwn(doc, k) && jsonContains(doc[k], filter[k]))
    );
  return jsonEqual(doc, filter);
}

const SCOPE_RANK: Record<AgentScopeKind, number> = { floor: 0, session: 1, project: 2, workspace: 3 };

/** A binding's scope may equal the type's or be narrower (workspace > project > session > floor). */
export const scopeNarrows = (binding: AgentScopeKind, type: AgentScopeKind): boolean =>
  SCOPE_RANK[binding] <= SCOPE_RANK[type];

const expands = (code: string, message: string, details?: unknown) =>
  new DomainError(code, 403, message, details);

/**
 * Spec 1 "Narrowing rule": the binding's set overrides are each a subset of the type's defaults,
 * checked in the order output targets, grants, event subscriptions, MCP bindings (403 codes
 * `agent_override_expands_*`). Inherited (null) fields always pass.
 */
export function checkBindingNarrows(defaults: AgentDefaults, overrides: AgentBindingOverrides): void {
  const problem = bindingWidening(defaults, overrides);
  if (problem) throw expands(problem.code, problem.message, problem.details);
}

/** The first way the overrides widen the defaults, or null when they only narrow them. */
export function bindingWidening(
  defaults: AgentDefaults,
  overrides: AgentBindingOverrides,
): { code: string; message: string; details?: unknown } | null {
  const grants = overrides.grants;
  if (grants) {
    const typeTargets = (defaults.grants.allowed_output_targets as string[] | undefined) ?? [];
    const targets = (grants.allowed_output_targets as string[] | undefined) ?? [];
    const extra = targets.filter((t) => !typeTargets.includes(t));
    if (extra.length > 0)
      return {
        code: 'agent_override_expands_output_targets',
        message: `The Agent Type does not allow the output targets ${extra.join(', ')}`,
        details: { targets: extra },
      };
    const { allowed_output_targets: _t, ...rest } = grants;
    const { allowed_output_targets: _d, ...typeRest } = defaults.grants;
    const wider = Object.keys(rest).filter(
      (k) => !Object.hasOwn(typeRest, k) || !jsonNarrows(rest[k], typeRest[k]),
    );
    if (wider.length > 0)
      return {
        code: 'agent_override_expands_grants',
        message: `The grants ${wider.join(', ')} go beyond the Agent Type's`,
        details: { grants: wider },
      };
  }
  const subscriptions = overrides.event_subscriptions;
  if (subscriptions) {
    const wider = subscriptions.filter(
      (s) =>
        !defaults.event_subscriptions.some(
          (d) =>
            d.type === s.type &&
            (d.filter_json === null ||
              (s.filter_json !== null && jsonContains(s.filter_json, d.filter_json))),
        ),
    );
    if (wider.length > 0)
      return {
        code: 'agent_override_expands_subscriptions',
        message: `The event subscriptions ${wider.map((s) => s.type).join(', ')} go beyond the Agent Type's`,
        details: { event_types: wider.map((s) => s.type) },
      };
  }
  const mcp = overrides.mcp_bindings;
  if (mcp) {
    const wider = mcp.filter((m) => {
      const d = defaults.mcp_bindings.find((x) => x.mcp_server_id === m.mcp_server_id);
      if (!d) return true;
      if (d.allowed_tools === null) return false;
      return m.allowed_tools === null || m.allowed_tools.some((t) => !d.allowed_tools!.includes(t));
    });
    if (wider.length > 0)
      return {
        code: 'agent_override_expands_mcp',
        message: `The MCP bindings ${wider.map((m) => m.mcp_server_id).join(', ')} go beyond the Agent Type's`,
        details: { mcp_server_ids: wider.map((m) => m.mcp_server_id) },
      };
  }
  return null;
}

/** What a binding runs with: each override, or the type's default where it inherits. */
export interface EffectiveAgentConfig {
  scope_kind: AgentScopeKind;
  llm_profile_id: string | null;
  tool_policy_id: string | null;
  mcp_bindings: AgentMcpBinding[];
  event_subscriptions: AgentEventSubscription[];
  grants: Record<string, unknown>;
  allowed_output_targets: AgentOutputTarget[];
  reads: AgentRead[];
  /** The type's metadata with the binding's keys over it (shallow). */
  metadata: Record<string, unknown>;
}

export function effectiveAgentConfig(
  defaults: AgentDefaults,
  binding: {
    scope_kind: AgentScopeKind;
    llm_profile_id: string | null;
    tool_policy_id: string | null;
    mcp_bindings: AgentMcpBinding[] | null;
    event_subscriptions: AgentEventSubscription[] | null;
    grants: Record<string, unknown> | null;
    metadata: Record<string, unknown>;
  },
): EffectiveAgentConfig {
  const grants = binding.grants ?? defaults.grants;
  return {
    scope_kind: binding.scope_kind,
    llm_profile_id: binding.llm_profile_id ?? defaults.llm_profile_id,
    tool_policy_id: binding.tool_policy_id ?? defaults.tool_policy_id,
    mcp_bindings: binding.mcp_bindings ?? defaults.mcp_bindings,
    event_subscriptions: binding.event_subscriptions ?? defaults.event_subscriptions,
    grants,
    allowed_output_targets: (grants.allowed_output_targets as AgentOutputTarget[] | undefined) ?? [],
    reads: (grants.reads as AgentRead[] | undefined) ?? [],
    metadata: { ...defaults.metadata, ...binding.metadata },
  };
}

/** The document an event subscription's `filter_json` is matched against (as the trigger builds it). */
export interface AgentEventDocument {
  type: string;
  visibility?: string;
  source?: string;
  actor_account_id?: string;
  actor_client_id?: string;
  session_id?: string;
  branch_id?: string;
  floor_id?: string;
  page_id?: string;
  message_id?: string;
  payload: unknown;
}

/** True when the subscription takes the event (same type, and the document contains the filter). */
export const subscriptionMatches = (subscription: AgentEventSubscription, event: AgentEventDocument) =>
  subscription.type === event.type &&
  (subscription.filter_json === null || jsonContains(event, subscription.filter_json));

/** The dedupe key of a run: per (binding, event) for event runs, per (binding, Idempotency-Key) for manual ones. */
export const agentRunDedupeKey = (
  bindingId: string,
  trigger: { eventId: string } | { idempotencyKey: string },
) =>
  'eventId' in trigger
    ? `agent.run:${bindingId}:event:${trigger.eventId}`
    : `agent.run:${bindingId}:manual:${trigger.idempotencyKey}`;
