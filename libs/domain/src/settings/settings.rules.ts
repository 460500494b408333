import { DomainError, validationError } from '../errors';
import { canonicalJson, serialiseValue } from '../derived-outputs/derived-output.rules';

/**
 * Project settings overrides (spec 1) and the Workspace registries they point at (docs/decisions.md
 * "Settings"): limits, the allowed keys of each override_json, and the tool-list checks. Pure: no I/O.
 */
export const LLM_PROVIDER_NAMES = [
  'openai',
  'anthropic',
  'google',
  'deepseek',
  'xai',
  'openai-compatible',
] as const;
export type LlmProviderName = (typeof LLM_PROVIDER_NAMES)[number];

export const MCP_SERVER_STATUSES = ['enabled', 'disabled'] as const;
export const TOOL_POLICY_STATUSES = ['active', 'archived'] as const;
export const TOOL_POLICY_MODES = ['allow', 'deny'] as const;
export type ToolPolicyMode = (typeof TOOL_POLICY_MODES)[number];

export const REGISTRY_NAME_MAX_CHARS = 120;
export const TOOL_NAME_MAX_CHARS = 200;
/** A server catalog, a policy's tool list and a binding's allowed_tools hold at most 200 names. */
export const TOOL_LIST_MAX_ITEMS = 200;
export const MCP_URL_MAX_CHARS = 2000;
/** Serialised UTF-8 size limit of every override_json / config_override_json. */
export const SETTINGS_JSON_MAX_BYTES = 64 * 1024;
export const MODEL_ID_MAX_CHARS = 200;

export interface FieldProblem {
  field: string;
  problems: string[];
}

const invalid = (fields: FieldProblem[], extra: Record<string, unknown> = {}) =>
  validationError(fields.map((f) => `${f.field}: ${f.problems.join(', ')}`).join('; '), {
    fields,
    ...extra,
  });

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(value));

/** A plain JSON object of at most 64 KiB serialised, else 400 `validation_error` naming `field`. */
export function requireSettingsObject(field: string, value: unknown): Record<string, unknown> {
  if (!isPlainObject(value)) throw invalid([{ field, problems: [`${field} must be a JSON object`] }]);
  try {
    serialiseValue(value, SETTINGS_JSON_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw invalid([{ field, problems: [error.message.replace(/^value/, field)] }]);
  }
  return value;
}

/** Order-preserving duplicate removal (spec 1: `allowed_tools` duplicates are removed). */
export const uniqueTools = (tools: readonly string[]): string[] => [...new Set(tools)];

/** Problems of one tool list: names 1-200 characters without NUL, at most 200 names. */
function toolListProblems(value: unknown, options: { unique: boolean }): string[] {
  if (!Array.isArray(value)) return ['must be an array of strings'];
  const problems: string[] = [];
  if (value.length > TOOL_LIST_MAX_ITEMS) problems.push(`must hold at most ${TOOL_LIST_MAX_ITEMS} names`);
  for (const name of value) {
    if (
      typeof name !== 'string' ||
      name.length < 1 ||
      [...name].length > TOOL_NAME_MAX_CHARS ||
      name.includes('\u0000')
    ) {
      problems.push(`every name must be a string of 1-${TOOL_NAME_MAX_CHARS} characters`);
      break;
    }
  }
  if (options.unique && new Set(value).size !== value.length) problems.push('names must be unique');
  return problems;
}

/** A server catalog (`tools`) or a policy's tool list: unique names, at most 200. */
export function requireToolList(field: string, value: unknown): string[] {
  const problems = toolListProblems(value, { unique: true });
  if (problems.length) throw invalid([{ field, problems }]);
  return value as string[];
}

/**
 * A binding's `allowed_tools`, duplicates removed, checked against the server's catalog: names the
 * catalog lacks are 400 `validation_error` with `details.unknown_tools`.
 */
export function resolveAllowedTools(allowedTools: readonly string[], catalog: readonly string[]): string[] {
  const tools = uniqueTools(allowedTools);
  const known = new Set(catalog);
  const unknown = tools.filter((tool) => !known.has(tool));
  if (unknown.length) {
    throw invalid(
      [{ field: 'allowed_tools', problems: [`not in the MCP server's tool catalog: ${unknown.join(', ')}`] }],
      { unknown_tools: unknown },
    );
  }
  return tools;
}

/** An MCP server URL: absolute http or https. */
export function requireMcpUrl(value: unknown): string {
  const problem = (() => {
    if (typeof value !== 'string' || value.length > MCP_URL_MAX_CHARS)
      return `url must be a string of at most ${MCP_URL_MAX_CHARS} characters`;
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'url must use http or https';
    } catch {
      return 'url must be an absolute URL';
    }
  })();
  if (problem) throw invalid([{ field: 'url', problems: [problem] }]);
  return value as string;
}

export interface ToolPolicyJson {
  mode: ToolPolicyMode;
  tools: string[];
}

/**
 * A tool policy's `policy_json`: `{mode: "allow" | "deny", tools: string[]}`. `allow` permits only
 * the listed tools, `deny` permits every tool except them. No other keys.
 */
export function requireToolPolicyJson(value: unknown): ToolPolicyJson {
  const object = requireSettingsObject('policy_json', value);
  const fields = checkToolPolicyKeys('policy_json', object, { required: true });
  if (fields.length) throw invalid(fields);
  return { mode: object.mode as ToolPolicyMode, tools: object.tools as string[] };
}

function checkToolPolicyKeys(
  field: string,
  object: Record<string, unknown>,
  options: { required: boolean },
): FieldProblem[] {
  const fields: FieldProblem[] = [];
  for (const key of Object.keys(object)) {
    if (key !== 'mode' && key !== 'tools')
      fields.push({ field: `${field}.${key}`, problems: ['is not an allowed key (mode, tools)'] });
  }
  if (object.mode !== undefined || options.required) {
    if (!(TOOL_POLICY_MODES as readonly unknown[]).includes(object.mode))
      fields.push({ field: `${field}.mode`, problems: ['must be allow or deny'] });
  }
  if (object.tools !== undefined || options.required) {
    const problems = toolListProblems(object.tools, { unique: true });
    if (problems.length) fields.push({ field: `${field}.tools`, problems });
  }
  return fields;
}

/**
 * A tool policy override's `override_json`: optional `mode` and `tools`, each replacing the base
 * policy's value. `{}` keeps the base policy as it is.
 */
export function requireToolPolicyOverrideJson(value: unknown): Partial<ToolPolicyJson> {
  const object = requireSettingsObject('override_json', value);
  const fields = checkToolPolicyKeys('override_json', object, { required: false });
  if (fields.length) throw invalid(fields);
  return object as Partial<ToolPolicyJson>;
}

type ParamRule = { kind: 'integer' | 'number' | 'boolean' | 'effort'; min?: number; max?: number };

/** Spec 2 "Binding params": each may also be null (cancels the upstream value). */
export const BINDING_PARAM_RULES: Record<string, ParamRule> = {
  max_context_tokens: { kind: 'integer', min: 1 },
  max_output_tokens: { kind: 'integer', min: 1 },
  temperature: { kind: 'number', min: 0, max: 2 },
  top_p: { kind: 'number', min: 0, max: 1 },
  top_k: { kind: 'integer', min: 0 },
  frequency_penalty: { kind: 'number', min: -2, max: 2 },
  presence_penalty: { kind: 'number', min: -2, max: 2 },
  stream: { kind: 'boolean' },
  timeout_ms: { kind: 'integer', min: 1 },
  max_retries: { kind: 'integer', min: 0, max: 10 },
  reasoning_effort: { kind: 'effort' },
};

export type BindingParams = Record<string, number | boolean | string | null>;

function paramProblem(rule: ParamRule, value: unknown): string | null {
  if (value === null) return null;
  if (rule.kind === 'boolean') return typeof value === 'boolean' ? null : 'must be a boolean or null';
  if (rule.kind === 'effort')
    return ['low', 'medium', 'high'].includes(value as string) ? null : 'must be low, medium, high or null';
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number or null';
  if (rule.kind === 'integer' && !Number.isInteger(value)) return 'must be an integer or null';
  if (rule.min !== undefined && value < rule.min) return `must be at least ${rule.min}`;
  if (rule.max !== undefined && value > rule.max) return `must be at most ${rule.max}`;
  return null;
}

export interface LlmOverrideJson {
  provider?: LlmProviderName;
  model_id?: string;
  params?: BindingParams;
  /** A binding param written at the top level (`{temperature: 0.5}`), or a key kept as written. */
  [key: string]: unknown;
}

/**
 * Keys an LLM override may not carry: a Project override can neither hold a secret (override_json is
 * stored and shown as written) nor point a profile's key at another address (the profile's base_url
 * went through the network guard).
 */
const LLM_OVERRIDE_REFUSED_KEYS: Record<string, string> = {
  api_key: 'a key belongs to the base profile; override_json is stored and shown as written',
  base_url: "the base profile's address applies; create another profile for another address",
};

/**
 * An LLM profile override's `override_json` (spec 1: an object, stored as written): `provider`,
 * `model_id` (1-200 characters) and `params` (spec 2 binding params, a null field cancels the
 * profile's value) are checked; a binding param may also be written at the top level
 * (`{temperature: 0.5}`, checked the same way; `params` wins on the same name). Other keys are kept
 * as written and play no part in model resolution, except `api_key` and `base_url`, which are refused.
 */
export function requireLlmOverrideJson(value: unknown): LlmOverrideJson {
  const object = requireSettingsObject('override_json', value);
  const fields: FieldProblem[] = [];
  for (const [key, reason] of Object.entries(LLM_OVERRIDE_REFUSED_KEYS)) {
    if (key in object)
      fields.push({ field: `override_json.${key}`, problems: [`is not allowed: ${reason}`] });
  }
  for (const [key, param] of Object.entries(object)) {
    const rule = Object.hasOwn(BINDING_PARAM_RULES, key) ? BINDING_PARAM_RULES[key] : undefined;
    const problem = rule ? paramProblem(rule, param) : null;
    if (problem) fields.push({ field: `override_json.${key}`, problems: [problem] });
  }
  if (object.provider !== undefined && !(LLM_PROVIDER_NAMES as readonly unknown[]).includes(object.provider))
    fields.push({
      field: 'override_json.provider',
      problems: [`must be one of ${LLM_PROVIDER_NAMES.join(', ')}`],
    });
  if (
    object.model_id !== undefined &&
    (typeof object.model_id !== 'string' ||
      object.model_id.trim() === '' ||
      [...object.model_id].length > MODEL_ID_MAX_CHARS)
  )
    fields.push({
      field: 'override_json.model_id',
      problems: [`must be a string of 1-${MODEL_ID_MAX_CHARS} characters`],
    });
  if (object.params !== undefined) {
    if (!isPlainObject(object.params)) {
      fields.push({ field: 'override_json.params', problems: ['must be an object'] });
    } else {
      for (const [key, param] of Object.entries(object.params)) {
        const rule = Object.hasOwn(BINDING_PARAM_RULES, key) ? BINDING_PARAM_RULES[key] : undefined;
        const problem = rule ? paramProblem(rule, param) : 'is not a binding param';
        if (problem) fields.push({ field: `override_json.params.${key}`, problems: [problem] });
      }
    }
  }
  if (fields.length) throw invalid(fields);
  return object as LlmOverrideJson;
}

/**
 * The binding params of a stored LLM override: those written at the top level, then `params` over
 * them (null when there are none). Model resolution and the effective config read params only here.
 */
export function llmOverrideParams(override: LlmOverrideJson): BindingParams | null {
  const top: BindingParams = {};
  for (const key of Object.keys(BINDING_PARAM_RULES)) {
    if (Object.hasOwn(override, key)) top[key] = override[key] as BindingParams[string];
  }
  const nested = isPlainObject(override.params) ? (override.params as BindingParams) : undefined;
  if (!Object.keys(top).length) return nested ?? null;
  return { ...top, ...nested };
}

/** The names each settings write is journalled under (operation log action, event type). */
export const SETTINGS_KINDS = {
  llm_profile_override: { log: 'project_settings.llm_profile_override.put' },
  mcp_binding: { log: 'project_settings.mcp_binding.put' },
  tool_policy_override: { log: 'project_settings.tool_policy_override.put' },
} as const;
export type SettingsKind = keyof typeof SETTINGS_KINDS;
export const SETTINGS_UPDATED_EVENT = 'project.settings_updated';

/** The fields of `next` that differ from `previous` (every field when there is no previous record). */
export function changedSettingsFields(
  previous: object | undefined,
  next: object,
  fields: readonly string[],
): string[] {
  if (!previous) return [...fields];
  const p = previous as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  return fields.filter((f) => canonicalJson(p[f]) !== canonicalJson(n[f]));
}
