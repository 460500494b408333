import { DomainError } from '../../errors';
import { ADVANCED_PLACEMENTS, COMMON_PLACEMENTS, INJECTION_LIMITS, type PromptMode } from './injections';

/**
 * What the persistent injection routes accept (spec 2 "Persistent injection record", "Persistent
 * injections"; docs/decisions.md "Prompt runtime policy and injections"). A bad value of a known field is
 * 400 `invalid_injection_payload` naming the field in `details.fields`. Lengths count UTF-16 code units,
 * as the engine's `content_length_exceeded` check does, so a stored record never fails that check.
 */

export const PROMPT_INJECTION_ID_PREFIX = 'pinj';
export const INJECTION_MODE_SCOPES: readonly PromptMode[] = ['compat_strict', 'compat_plus', 'native'];
/** The only source kind the routes write (the others are the runtime's). */
export const WRITABLE_INJECTION_SOURCE_KINDS = ['client_injection'] as const;
/** `order` is stored as a 32-bit integer. */
export const INJECTION_ORDER_MIN = -2_147_483_648;
export const INJECTION_ORDER_MAX = 2_147_483_647;
export const INJECTION_DEFAULT_ORDER = 100;
/** The longest `ttl_ms`: ten years (spec 2 sets none; this keeps `created_at + ttl_ms` exact). */
export const INJECTION_TTL_MAX_MS = 315_360_000_000;
export const INJECTION_PLACEMENT_PARAM_KEYS = ['floor_no', 'offset', 'depth'] as const;

export interface InjectionPlacementParams {
  floor_no?: number;
  offset?: number;
  depth?: number;
}

export interface InjectionFields {
  title: string;
  content: string;
  placement: string;
  placement_params: InjectionPlacementParams | null;
  order: number;
  enabled: boolean;
  mode_scope: PromptMode | null;
  ttl_ms: number | null;
}

export type InjectionPatch = Partial<InjectionFields>;

export const MUTABLE_INJECTION_FIELDS = [
  'title',
  'content',
  'placement',
  'placement_params',
  'order',
  'enabled',
  'mode_scope',
  'ttl_ms',
] as const satisfies ReadonlyArray<keyof InjectionFields>;

export interface InjectionFieldProblem {
  field: string;
  problems: string[];
}

export function isKnownPlacement(placement: string): boolean {
  return (COMMON_PLACEMENTS as readonly string[]).includes(placement) || placement in ADVANCED_PLACEMENTS;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function textProblem(value: unknown, field: string, max: number): string | null {
  if (typeof value !== 'string') return `${field} must be a string`;
  if (value.length < 1 || value.length > max) return `${field} must be 1-${max} characters`;
  if (!value.trim()) return `${field} must not be blank`;
  if (value.includes('\u0000')) return `${field} must not contain NUL characters`;
  return null;
}

/** The problem of one known field's value (`null` is judged by the caller: it clears or it is invalid). */
function fieldProblem(field: string, value: unknown): string | null {
  switch (field) {
    case 'source_kind':
      return (WRITABLE_INJECTION_SOURCE_KINDS as readonly unknown[]).includes(value)
        ? null
        : 'source_kind must be client_injection';
    case 'title':
      return textProblem(value, 'title', INJECTION_LIMITS.title_chars);
    case 'content':
      return textProblem(value, 'content', INJECTION_LIMITS.content_chars);
    case 'placement':
      return typeof value === 'string' && isKnownPlacement(value)
        ? null
        : 'placement must be a common or advanced placement of spec 2';
    case 'placement_params': {
      if (!isObject(value)) return 'placement_params must be an object or null';
      for (const [key, param] of Object.entries(value)) {
        if (!(INJECTION_PLACEMENT_PARAM_KEYS as readonly string[]).includes(key))
          return `placement_params.${key} is not a placement parameter (floor_no, offset, depth)`;
        if (typeof param !== 'number' || !Number.isSafeInteger(param) || param < 0)
          return `placement_params.${key} must be a non-negative integer`;
      }
      return null;
    }
    case 'order':
      return typeof value === 'number' &&
        Number.isInteger(value) &&
        value >= INJECTION_ORDER_MIN &&
        value <= INJECTION_ORDER_MAX
        ? null
        : `order must be an integer from ${INJECTION_ORDER_MIN} to ${INJECTION_ORDER_MAX}`;
    case 'enabled':
      return typeof value === 'boolean' ? null : 'enabled must be a boolean';
    case 'mode_scope':
      return (INJECTION_MODE_SCOPES as readonly unknown[]).includes(value)
        ? null
        : `mode_scope must be null or one of ${INJECTION_MODE_SCOPES.join(', ')}`;
    case 'ttl_ms':
      return typeof value === 'number' &&
        Number.isInteger(value) &&
        value >= 1 &&
        value <= INJECTION_TTL_MAX_MS
        ? null
        : `ttl_ms must be null or an integer from 1 to ${INJECTION_TTL_MAX_MS}`;
    default:
      return `${field} is not an injection field`;
  }
}

/** Fields that may be null: it means "none" (and clears them on PATCH). */
const NULLABLE = new Set(['placement_params', 'mode_scope', 'ttl_ms']);
const REQUIRED_ON_CREATE = ['source_kind', 'title', 'content', 'placement'];

/** Every problem of a create (`mode: 'create'`) or PATCH body; fields absent (undefined) are skipped. */
export function injectionPayloadProblems(
  body: Record<string, unknown>,
  mode: 'create' | 'patch',
): InjectionFieldProblem[] {
  const problems: InjectionFieldProblem[] = [];
  if (mode === 'create') {
    for (const field of REQUIRED_ON_CREATE)
      if (body[field] === undefined || body[field] === null)
        problems.push({ field, problems: [`${field} is required`] });
  } else if (MUTABLE_INJECTION_FIELDS.every((field) => body[field] === undefined)) {
    problems.push({
      field: MUTABLE_INJECTION_FIELDS.join(','),
      problems: [`Send at least one of ${MUTABLE_INJECTION_FIELDS.join(', ')}`],
    });
  }
  for (const [field, value] of Object.entries(body)) {
    if (value === undefined || problems.some((p) => p.field === field)) continue;
    if (value === null && NULLABLE.has(field)) continue;
    const problem = value === null ? `${field} must not be null` : fieldProblem(field, value);
    if (problem) problems.push({ field, problems: [problem] });
  }
  return problems;
}

function invalidPayload(problems: InjectionFieldProblem[]): DomainError {
  return new DomainError(
    'invalid_injection_payload',
    400,
    problems.map((p) => `${p.field}: ${p.problems.join(', ')}`).join('; '),
    { fields: problems },
  );
}

/** A create body with its defaults applied, or 400 `invalid_injection_payload`. */
export function requireInjectionCreate(body: Record<string, unknown>): InjectionFields {
  const problems = injectionPayloadProblems(body, 'create');
  if (problems.length > 0) throw invalidPayload(problems);
  return {
    title: body.title as string,
    content: body.content as string,
    placement: body.placement as string,
    placement_params: (body.placement_params as InjectionPlacementParams | null | undefined) ?? null,
    order: (body.order as number | undefined) ?? INJECTION_DEFAULT_ORDER,
    enabled: (body.enabled as boolean | undefined) ?? true,
    mode_scope: (body.mode_scope as PromptMode | null | undefined) ?? null,
    ttl_ms: (body.ttl_ms as number | null | undefined) ?? null,
  };
}

/** The mutable fields a PATCH body sets (null clears the nullable ones), or 400 `invalid_injection_payload`. */
export function requireInjectionPatch(body: Record<string, unknown>): InjectionPatch {
  const problems = injectionPayloadProblems(body, 'patch');
  if (problems.length > 0) throw invalidPayload(problems);
  const patch: Record<string, unknown> = {};
  for (const field of MUTABLE_INJECTION_FIELDS) if (body[field] !== undefined) patch[field] = body[field];
  return patch as InjectionPatch;
}

/** `created_at + ttl_ms`, or null when the record never expires. */
export const injectionExpiresAt = (createdAt: number, ttlMs: number | null): number | null =>
  ttlMs === null ? null : createdAt + ttlMs;
