import { DomainError, validationError } from '../errors';
import { hasUnpairedSurrogate } from '../text/storable-text';

/**
 * Derived output rules (spec 1 "Derived outputs", "States and transitions", "Limits"): the state
 * table, the value checks and size limit, the domain length. Pure: no I/O.
 */
export const DERIVED_OUTPUT_STATUSES = ['draft', 'published', 'archived'] as const;
export type DerivedOutputStatus = (typeof DERIVED_OUTPUT_STATUSES)[number];

/** Serialised UTF-8 size limit of `value`: 256 KiB. */
export const DERIVED_OUTPUT_VALUE_MAX_BYTES = 256 * 1024;
export const DERIVED_OUTPUT_DOMAIN_MAX_CHARS = 128;
/** Deeper values are refused (400 `derived_output_payload_invalid`): Postgres jsonb and JSON tooling recurse. */
export const DERIVED_OUTPUT_VALUE_MAX_DEPTH = 128;
export const DERIVED_OUTPUT_LIST_DEFAULT_LIMIT = 50;
export const DERIVED_OUTPUT_LIST_MAX_LIMIT = 200;

const invalidStatus = (message: string) => new DomainError('derived_output_invalid_status', 400, message);

const isStatus = (value: string): value is DerivedOutputStatus =>
  (DERIVED_OUTPUT_STATUSES as readonly string[]).includes(value);

/** A create may only start in `draft` (the default) or `published`. */
export function initialStatus(status: string | undefined): Exclude<DerivedOutputStatus, 'archived'> {
  if (status === undefined) return 'draft';
  if (status === 'draft' || status === 'published') return status;
  if (status === 'archived')
    throw invalidStatus('A derived output cannot be created archived; use draft or published');
  throw invalidStatus(`Unknown status "${status}"; use draft or published`);
}

/** The transitions of the state table; staying in the same non-archived status is not a transition. */
const TRANSITIONS: Record<DerivedOutputStatus, readonly DerivedOutputStatus[]> = {
  draft: ['draft', 'published', 'archived'],
  published: ['published', 'archived'],
  archived: [],
};

export function assertNotArchived(current: DerivedOutputStatus): void {
  if (current === 'archived') {
    throw new DomainError(
      'derived_output_archived_immutable',
      409,
      'An archived derived output cannot be changed',
    );
  }
}

/**
 * The next status of an update. An archived entry is immutable (409
 * `derived_output_archived_immutable`); an unknown status or a move outside the table (published →
 * draft) is 400 `derived_output_invalid_status`.
 */
export function nextStatus(current: DerivedOutputStatus, requested: string | undefined): DerivedOutputStatus {
  assertNotArchived(current);
  if (requested === undefined) return current;
  if (!isStatus(requested))
    throw invalidStatus(`Unknown status "${requested}"; use draft, published or archived`);
  if (!TRANSITIONS[current].includes(requested)) {
    throw invalidStatus(`A ${current} derived output cannot move to ${requested}`);
  }
  return requested;
}

/** Domain: 1-128 characters (Unicode code points). */
export function requireDomain(domain: unknown): string {
  const problem =
    typeof domain !== 'string'
      ? 'domain must be a string'
      : [...domain].length < 1 || [...domain].length > DERIVED_OUTPUT_DOMAIN_MAX_CHARS
        ? `domain must be 1-${DERIVED_OUTPUT_DOMAIN_MAX_CHARS} characters`
        : null;
  if (problem) throw validationError(problem, { fields: [{ field: 'domain', problems: [problem] }] });
  return domain as string;
}

function findInvalid(value: unknown, depth: number, seen: Set<object>): string | null {
  if (depth > DERIVED_OUTPUT_VALUE_MAX_DEPTH)
    return `nesting deeper than ${DERIVED_OUTPUT_VALUE_MAX_DEPTH} levels`;
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'a number that is not finite';
  if (typeof value === 'string') {
    if (value.includes('\u0000')) return 'a string with a NUL character';
    return hasUnpairedSurrogate(value) ? 'a string with an unpaired UTF-16 surrogate' : null;
  }
  if (typeof value !== 'object') return `a ${typeof value}`;
  if (seen.has(value)) return 'a circular reference';
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (const item of value) {
        const problem = findInvalid(item, depth + 1, seen);
        if (problem) return problem;
      }
      return null;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null)
      return `an object of type ${value.constructor?.name ?? 'unknown'}`;
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return 'a key with a NUL character';
      if (hasUnpairedSurrogate(key)) return 'a key with an unpaired UTF-16 surrogate';
      const problem = findInvalid(item, depth + 1, seen);
      if (problem) return problem;
    }
    return null;
  } finally {
    seen.delete(value);
  }
}

export interface SerialisedValue {
  json: string;
  byteCount: number;
}

/**
 * Checks and serialises a value. Only plain JSON is accepted (null, booleans, finite numbers,
 * strings without NUL, arrays, plain objects, at most 128 levels deep): anything else is 400
 * `derived_output_payload_invalid`. Over 256 KiB serialised (UTF-8 bytes) is 413
 * `derived_output_payload_too_large`.
 */
export function serialiseValue(value: unknown, maxBytes = DERIVED_OUTPUT_VALUE_MAX_BYTES): SerialisedValue {
  const problem = findInvalid(value, 0, new Set());
  if (problem) {
    throw new DomainError(
      'derived_output_payload_invalid',
      400,
      `value is not JSON-serialisable: it contains ${problem}`,
    );
  }
  const json = JSON.stringify(value);
  const byteCount = Buffer.byteLength(json, 'utf8');
  if (byteCount > maxBytes) {
    throw new DomainError(
      'derived_output_payload_too_large',
      413,
      `value is ${byteCount} bytes serialised; the limit is ${maxBytes}`,
      { value_byte_count: byteCount, max_bytes: maxBytes },
    );
  }
  return { json, byteCount };
}

/** JSON with object keys sorted, for comparing values whatever their key order (jsonb reorders keys). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export type DerivedOutputWriteAction = 'create' | 'update' | 'archive';

/** Operation log action and Project event type of each write (spec 1 "Events"). */
export const DERIVED_OUTPUT_WRITE_NAMES: Record<DerivedOutputWriteAction, { log: string; event: string }> = {
  create: { log: 'derived_output.create', event: 'derived_output.created' },
  update: { log: 'derived_output.update', event: 'derived_output.updated' },
  archive: { log: 'derived_output.archive', event: 'derived_output.archived' },
};

/** An update that ends in `archived` is an archive; any other is an update. */
export const updateAction = (from: DerivedOutputStatus, to: DerivedOutputStatus): DerivedOutputWriteAction =>
  to === 'archived' && from !== 'archived' ? 'archive' : 'update';
