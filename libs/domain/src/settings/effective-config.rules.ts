import {
  llmOverrideParams,
  type BindingParams,
  type LlmOverrideJson,
  type ToolPolicyJson,
  type ToolPolicyMode,
} from './settings.rules';

/**
 * The merge rules of the effective-config views (docs/decisions.md "Settings"). Every value carries
 * the layer it came from. Pure: the use cases load the layers, these functions merge them.
 */
export const MODEL_SLOTS = ['*', 'narrator', 'director', 'verifier', 'memory'] as const;
export type ModelSlot = (typeof MODEL_SLOTS)[number];

/** Sources of a model slot. `global_profile` and `session_profile` are filled in by issue 6. */
export type ModelSource = 'env' | 'global_profile' | 'project_override' | 'session_profile';
/** Precedence, highest first: a session binding beats the Project override, which beats the account's global binding, then env. */
export const MODEL_SOURCE_PRECEDENCE: readonly ModelSource[] = [
  'session_profile',
  'project_override',
  'global_profile',
  'env',
];

/** Where one field of a slot came from: a layer, or the profile under a layer. */
export type ModelFieldSource = ModelSource | 'profile';

export interface ModelLayer {
  source: ModelSource;
  /** The slot the layer is bound to; `*` applies to every slot without a binding of its own. */
  slot: ModelSlot;
  scope: 'global' | 'project' | 'session' | null;
  profile_id: string | null;
  override_id: string | null;
  preset_name: string | null;
  provider: string | null;
  model_id: string | null;
  base_url: string | null;
  params: BindingParams | null;
  field_sources: {
    provider: ModelFieldSource;
    model_id: ModelFieldSource;
    base_url: ModelFieldSource;
    params: ModelFieldSource | null;
  };
}

/** Spec 2 "Runtime slot resolution item", plus the Project layer's override id and per-field sources. */
export type ModelSlotItem = Omit<ModelLayer, 'slot'> & { slot: ModelSlot };

export interface EnvModelConfig {
  provider: string | null;
  model: string | null;
  baseUrl: string | null;
}

/** The `env` layer (LLM_* config): bound to `*`; scope, profile, preset and params are null (spec 2). */
export function envModelLayer(env: EnvModelConfig): ModelLayer {
  return {
    source: 'env',
    slot: '*',
    scope: null,
    profile_id: null,
    override_id: null,
    preset_name: null,
    provider: env.provider,
    model_id: env.model,
    base_url: env.baseUrl,
    params: null,
    field_sources: { provider: 'env', model_id: 'env', base_url: 'env', params: null },
  };
}

/** Spec 2: a null param cancels the lower value; the result holds no nulls. */
export function mergeParams(
  lower: BindingParams | null,
  higher: BindingParams | null | undefined,
): BindingParams {
  const out: BindingParams = { ...(lower ?? {}) };
  for (const [key, value] of Object.entries(higher ?? {})) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

export interface UsableProfile {
  id: string;
  preset_name: string;
  provider: string;
  model_id: string;
  base_url: string | null;
}

/**
 * The `project_override` layer: the Project's override_json merged over its base profile, for every
 * slot (`*`). `provider` and `model_id` replace the profile's; `params` are the override's (top-level
 * binding params and `params`, nulls dropped).
 */
export function projectOverrideLayer(
  override: { id: string; override_json: LlmOverrideJson },
  profile: UsableProfile,
): ModelLayer {
  const o = override.override_json;
  return {
    source: 'project_override',
    slot: '*',
    scope: 'project',
    profile_id: profile.id,
    override_id: override.id,
    preset_name: profile.preset_name,
    provider: o.provider ?? profile.provider,
    model_id: o.model_id ?? profile.model_id,
    base_url: profile.base_url,
    params: mergeParams(null, llmOverrideParams(o)),
    field_sources: {
      provider: o.provider === undefined ? 'profile' : 'project_override',
      model_id: o.model_id === undefined ? 'profile' : 'project_override',
      base_url: 'profile',
      params: 'project_override',
    },
  };
}

/**
 * The one place model layers meet: for a slot, the highest-precedence source wins; inside a source a
 * binding of the slot itself beats one of `*`. Issue 6 passes its `global_profile` / `session_profile`
 * layers in the same list. The env layer is always there, so every slot resolves.
 */
export function resolveModelSlot(slot: ModelSlot, layers: readonly ModelLayer[]): ModelSlotItem {
  for (const source of MODEL_SOURCE_PRECEDENCE) {
    const ofSource = layers.filter((l) => l.source === source);
    const layer = ofSource.find((l) => l.slot === slot) ?? ofSource.find((l) => l.slot === '*');
    if (layer) return { ...layer, slot };
  }
  throw new Error('resolveModelSlot needs the env layer');
}

export const resolveModelSlots = (layers: readonly ModelLayer[]): ModelSlotItem[] =>
  MODEL_SLOTS.map((slot) => resolveModelSlot(slot, layers));

export interface Sourced<T, S extends string = string> {
  value: T;
  source: S;
}

export interface EffectiveToolPolicy {
  override_id: string;
  base_policy_id: string;
  base_policy_name: string;
  source: 'project_override';
  mode: Sourced<ToolPolicyMode, 'tool_policy' | 'project_override'>;
  tools: Sourced<string[], 'tool_policy' | 'project_override'>;
}

/** An active override over its active base policy: `mode` and `tools` of override_json replace the policy's. */
export function effectiveToolPolicy(
  override: { id: string; base_policy_id: string; override_json: Partial<ToolPolicyJson> },
  policy: { name: string; policy_json: ToolPolicyJson },
): EffectiveToolPolicy {
  const o = override.override_json;
  return {
    override_id: override.id,
    base_policy_id: override.base_policy_id,
    base_policy_name: policy.name,
    source: 'project_override',
    mode:
      o.mode === undefined
        ? { value: policy.policy_json.mode, source: 'tool_policy' }
        : { value: o.mode, source: 'project_override' },
    tools:
      o.tools === undefined
        ? { value: policy.policy_json.tools, source: 'tool_policy' }
        : { value: o.tools, source: 'project_override' },
  };
}

/** A tool is permitted when every effective policy lets it through (`allow`: listed; `deny`: not listed). */
export function permittedTools(tools: readonly string[], policies: readonly EffectiveToolPolicy[]): string[] {
  return tools.filter((tool) =>
    policies.every((p) =>
      p.mode.value === 'allow' ? p.tools.value.includes(tool) : !p.tools.value.includes(tool),
    ),
  );
}

export interface EffectiveMcpBinding {
  binding_id: string;
  mcp_server_id: string;
  source: 'project_override';
  server: { name: string; url: string; status: 'enabled' };
  allowed_tools: string[];
  /** The binding's allowed_tools, or the server's whole catalog when they are empty (unrestricted). */
  effective_tools: Sourced<string[], 'project_override' | 'mcp_server'>;
  /** effective_tools after the effective tool policies. */
  permitted_tools: Sourced<string[], 'tool_policy' | 'project_override' | 'mcp_server'>;
  config_override_json: Record<string, unknown>;
}

export function effectiveMcpBinding(
  binding: {
    id: string;
    mcp_server_id: string;
    allowed_tools: string[];
    config_override_json: Record<string, unknown>;
  },
  server: { name: string; url: string; tools: string[] },
  policies: readonly EffectiveToolPolicy[],
): EffectiveMcpBinding {
  // Tools dropped from the catalog after the binding was written are no longer offered.
  const restricted = binding.allowed_tools.length > 0;
  const effective: Sourced<string[], 'project_override' | 'mcp_server'> = restricted
    ? { value: binding.allowed_tools.filter((t) => server.tools.includes(t)), source: 'project_override' }
    : { value: [...server.tools], source: 'mcp_server' };
  const permitted = permittedTools(effective.value, policies);
  return {
    binding_id: binding.id,
    mcp_server_id: binding.mcp_server_id,
    source: 'project_override',
    server: { name: server.name, url: server.url, status: 'enabled' },
    allowed_tools: binding.allowed_tools,
    effective_tools: effective,
    permitted_tools: {
      value: permitted,
      source: permitted.length === effective.value.length ? effective.source : 'tool_policy',
    },
    config_override_json: binding.config_override_json,
  };
}

/**
 * Spec 2's prompt runtime policy at its lowest layer, `system_default` (the prompt engine of a later
 * issue reads the same constant).
 */
export const SYSTEM_DEFAULT_PROMPT_POLICY = {
  structure: {
    mode: 'default',
    merge_adjacent_same_role: false,
    preserve_system_messages: true,
    assistant_rewrite_strategy: 'to_system',
  },
  delivery: { allow_assistant_prefill: true, require_last_user: false, no_assistant: false },
  budget: { max_input_tokens: 16000, reserved_completion_tokens: 1024 },
  source_selection: {
    history: { mode: 'full', max_messages: null },
    memory: { enabled: true },
    worldbook: { enabled: true },
    examples: { enabled: true },
  },
  visibility: { mode: 'allow_all_except_hidden', hidden_floor_ranges: [] },
} as const;

export type PromptPolicySource =
  | 'system_default'
  | 'asset_default'
  | 'session_policy'
  | 'branch_policy'
  | 'request_override'
  | 'provider_constraint';

/** Every leaf of a policy as `{value, source}` (arrays are leaves). */
export function sourcedLeaves(policy: unknown, source: PromptPolicySource): unknown {
  if (typeof policy === 'object' && policy !== null && !Array.isArray(policy)) {
    return Object.fromEntries(Object.entries(policy).map(([k, v]) => [k, sourcedLeaves(v, source)]));
  }
  return { value: Array.isArray(policy) ? [...(policy as unknown[])] : policy, source };
}

export interface EffectiveConfigWarning {
  code: string;
  message: string;
  [key: string]: unknown;
}

/**
 * Whether the LLM override's profile is usable; a missing, deleted or disabled profile makes the
 * layer fall away (the slots fall back to lower layers) with a warning.
 */
export function llmOverrideWarning(
  override: { id: string; base_profile_id: string },
  profile: { status: string } | null,
): EffectiveConfigWarning | null {
  if (!profile || profile.status === 'deleted')
    return {
      code: 'profile_not_found',
      message: "The LLM override's base profile no longer exists; slots fall back",
      override_id: override.id,
      profile_id: override.base_profile_id,
    };
  if (profile.status === 'disabled')
    return {
      code: 'profile_disabled',
      message: "The LLM override's base profile is disabled; slots fall back",
      override_id: override.id,
      profile_id: override.base_profile_id,
    };
  return null;
}
