import {
  BINDING_PARAM_RULES,
  DomainError,
  MODEL_SLOTS,
  type BindingParams,
  type ModelSlot,
} from '@hearth/domain';
import type { LlmProfileRow } from '@hearth/persistence';
import { SecretFormatError, type SecretBox } from '@hearth/platform';

/**
 * The rules the LLM profile use cases share (spec 2 "LLM Profile", docs/decisions.md "Model profiles"):
 * error constructors, the operation-log reference of a profile (masked key only), binding params
 * normalisation, and reading a stored key.
 */
export const LLM_BINDING_ID_PREFIX = 'llmb';
export const INSTANCE_SLOTS = MODEL_SLOTS;
export type InstanceSlot = ModelSlot;
export type BindingScope = 'global' | 'session';

export const profileNotFound = () => new DomainError('profile_not_found', 404, 'LLM profile not found');

export const profileInactive = (profile: Pick<LlmProfileRow, 'id' | 'status'>, action: string) =>
  new DomainError('profile_inactive', 409, `The LLM profile is ${profile.status} and cannot be ${action}`, {
    profile_id: profile.id,
    status: profile.status,
  });

export const profileConflict = (presetName: string) =>
  new DomainError('profile_conflict', 409, `An LLM profile named "${presetName}" already exists`, {
    preset_name: presetName,
  });

export const sessionScopeNotFound = () =>
  new DomainError('session_scope_not_found', 404, 'The session of a session-scope binding was not found');

export const invalidRequest = (message: string, fields: string[]) =>
  new DomainError('invalid_request', 400, message, { fields });

/** What an operation log keeps of a profile: never the key, only its masked form. */
export function profileRef(profile: LlmProfileRow): Record<string, unknown> {
  return {
    preset_name: profile.preset_name,
    provider: profile.provider,
    model_id: profile.model_id,
    base_url: profile.base_url,
    api_key_name: profile.api_key_name,
    masked_key: profile.api_key_masked,
    status: profile.status,
  };
}

/**
 * Spec 2 binding params: only the listed fields, each of its type and range or null (a null field
 * cancels the upstream value). Anything else is 400 `invalid_params` naming the fields.
 */
export function normaliseBindingParams(value: unknown): BindingParams {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new DomainError('invalid_params', 400, 'params must be an object or null', {
      fields: [{ field: 'params', problems: ['must be an object or null'] }],
    });
  const fields: Array<{ field: string; problems: string[] }> = [];
  const out: BindingParams = {};
  for (const [key, param] of Object.entries(value as Record<string, unknown>)) {
    const rule = BINDING_PARAM_RULES[key];
    const problem = rule ? paramProblem(rule, param) : 'is not a binding param';
    if (problem) fields.push({ field: `params.${key}`, problems: [problem] });
    else out[key] = param as BindingParams[string];
  }
  if (fields.length)
    throw new DomainError(
      'invalid_params',
      400,
      fields.map((f) => `${f.field} ${f.problems.join(', ')}`).join('; '),
      { fields },
    );
  return out;
}

function paramProblem(rule: (typeof BINDING_PARAM_RULES)[string], value: unknown): string | null {
  if (value === null) return null;
  if (rule.kind === 'boolean') return typeof value === 'boolean' ? null : 'must be a boolean or null';
  if (rule.kind === 'effort')
    return ['low', 'medium', 'high'].includes(value as string) ? null : 'must be low, medium, high or null';
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number or null';
  if (rule.kind === 'integer' && !Number.isSafeInteger(value)) return 'must be an integer or null';
  if (rule.min !== undefined && value < rule.min) return `must be at least ${rule.min}`;
  if (rule.max !== undefined && value > rule.max) return `must be at most ${rule.max}`;
  return null;
}

/**
 * Spec 2: params of the request (`generation_params`) under the binding's: a binding value replaces the
 * request's, a binding null removes it. The result holds no nulls.
 */
export function mergeTurnParams(
  request: Record<string, unknown> | null | undefined,
  binding: BindingParams | null | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request ?? {}))
    if (value !== null && value !== undefined) out[key] = value;
  for (const [key, value] of Object.entries(binding ?? {})) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

export type KeyReadResult =
  { ok: true; apiKey: string } | { ok: false; code: 'secret_invalid_format' | 'secret_unavailable' };

/** Decrypts a stored key without throwing: resolution skips bindings whose key cannot be read. */
export function tryReadKey(box: SecretBox, ciphertext: string): KeyReadResult {
  try {
    return { ok: true, apiKey: box.decrypt(ciphertext) };
  } catch (error) {
    if (error instanceof SecretFormatError) return { ok: false, code: 'secret_invalid_format' };
    if (error instanceof DomainError && error.code === 'secret_unavailable')
      return { ok: false, code: 'secret_unavailable' };
    throw error;
  }
}

/**
 * Reads a stored key where it is used directly (discover, test, a turn naming a profile): 500
 * `secret_invalid_format` when it cannot be decrypted, 503 `secret_unavailable` without any master key.
 */
export function readKey(box: SecretBox, profile: Pick<LlmProfileRow, 'id' | 'api_key_ciphertext'>): string {
  const result = tryReadKey(box, profile.api_key_ciphertext);
  if (result.ok) return result.apiKey;
  if (result.code === 'secret_unavailable')
    throw new DomainError(
      'secret_unavailable',
      503,
      'Reading model API keys needs the server variable APP_SECRETS_MASTER_KEY',
    );
  throw new DomainError(
    'secret_invalid_format',
    500,
    'The stored API key of this profile cannot be decrypted',
    {
      profile_id: profile.id,
    },
  );
}
