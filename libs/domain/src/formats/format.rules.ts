import { DomainError } from '../errors';
import { JSON_MAX_DEPTH, jsonNestedDeeperThan } from '../text/json-depth';

/** Shared helpers of the external-format codecs (SillyTavern files). Pure code. */

export type JsonObject = Record<string, unknown>;

/** 400 `import_parse_error`: the imported content cannot be understood; the message names what is wrong. */
export function importParseError(message: string, details?: unknown): DomainError {
  return new DomainError('import_parse_error', 400, message, details);
}

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses JSON text (a leading UTF-8 BOM is tolerated); malformed text, or JSON nested deeper than
 * JSON_MAX_DEPTH levels (the codecs copy and store it recursively), is an `import_parse_error`.
 */
export function parseJsonText(text: string, what: string, details?: JsonObject): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw importParseError(`${what} is not valid JSON: ${(error as Error).message}`, details);
  }
  if (jsonNestedDeeperThan(value)) throw importJsonTooDeep(what, details);
  return value;
}

/** 400 `import_parse_error` for imported JSON nested deeper than JSON_MAX_DEPTH levels. */
export function importJsonTooDeep(what: string, details?: JsonObject): DomainError {
  return importParseError(`${what} is nested deeper than ${JSON_MAX_DEPTH} levels`, {
    ...details,
    max_depth: JSON_MAX_DEPTH,
  });
}

/** A deep copy of a JSON value (imports and exports never share mutable objects with their input). */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Structural equality of JSON values, key order aside. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

export function expectString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw importParseError(`${field} must be a string`, { field });
  return value;
}

export function expectStringArray(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw importParseError(`${field} must be an array of strings`, { field });
  }
  return [...value] as string[];
}

export function expectObject(value: unknown, field: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) throw importParseError(`${field} must be an object`, { field });
  return value;
}
