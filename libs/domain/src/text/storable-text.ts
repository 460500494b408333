/**
 * Text Postgres cannot store: U+0000 (refused by `text` and `jsonb`) and a UTF-16 surrogate without its
 * pair (`jsonb` refuses its `\ud800` escape with a syntax error; `text` silently turns it into U+FFFD).
 */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The same rule as a whole-string pattern, for class-validator's `@Matches` on short request fields
 * (names, keys, reasons). Long texts and JSON go through `isUnstorableText` / `firstBadStringPath`.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this refuses
export const STORABLE_TEXT = /^(?:[^\u0000\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;

/** True when the string holds a UTF-16 surrogate without its pair. */
export const hasUnpairedSurrogate = (value: string): boolean => UNPAIRED_SURROGATE.test(value);

/**
 * The string with U+0000 and every unpaired surrogate replaced by U+FFFD, for text the service did not
 * choose (a model's reply): stored as it reads instead of failing the write. The same string when clean.
 */
export const toStorableText = (value: string): string =>
  isUnstorableText(value) ? value.replace(UNPAIRED_OR_NUL, '\ufffd') : value;

// eslint-disable-next-line no-control-regex -- NUL is exactly what this replaces
const UNPAIRED_OR_NUL = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** True when the string holds U+0000 or an unpaired surrogate. */
export const isUnstorableText = (value: string): boolean =>
  value.includes('\u0000') || hasUnpairedSurrogate(value);

/**
 * The path of the first string (a value or an object key) of a JSON value that `bad` refuses, or null:
 * `$.a[2].b` style paths from `root`; a bad key is reported at its object's path.
 */
export function firstBadStringPath(value: unknown, root: string, bad: (s: string) => boolean): string | null {
  if (typeof value === 'string') return bad(value) ? root : null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = firstBadStringPath(item, `${root}[${i}]`, bad);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (bad(key)) return root;
      const found = firstBadStringPath(item, `${root}.${key}`, bad);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * A JSON value with `toStorableText` applied to every string and object key: the value itself when
 * nothing needs it (no copy), else a copy. For files the service imports as they are (SillyTavern
 * chats, whose texts may hold a broken emoji).
 */
export function toStorableJson<T>(value: T): T {
  if (firstBadStringPath(value, '$', isUnstorableText) === null) return value;
  return repair(value) as T;
}

function repair(value: unknown): unknown {
  if (typeof value === 'string') return toStorableText(value);
  if (Array.isArray(value)) return value.map(repair);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [toStorableText(k), repair(v)]));
  return value;
}
