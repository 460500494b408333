import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '../errors';

/** Test helpers for the format specs (copies of /work/shared/fixtures in __fixtures__; only specs read the disk). */
export const FIXTURES = join(__dirname, '__fixtures__');

export function fixtureFiles(kind: string, suffix = '.json'): string[] {
  return readdirSync(join(FIXTURES, kind))
    .filter((name) => name.endsWith(suffix))
    .sort();
}

export function readFixture(kind: string, name: string): Buffer {
  return readFileSync(join(FIXTURES, kind, name));
}

export function readJsonFixture(kind: string, name: string): Record<string, unknown> {
  return JSON.parse(readFixture(kind, name).toString('utf8'));
}

/** Compares two JSON objects field by field (key order aside), naming the first differing path. */
export function expectFieldEquivalent(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'object' && expected !== null && !Array.isArray(expected)) {
    expect({ path, type: typeof actual, isArray: Array.isArray(actual) }).toEqual({
      path,
      type: 'object',
      isArray: false,
    });
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    expect({ path, keys: Object.keys(a).sort() }).toEqual({ path, keys: Object.keys(e).sort() });
    for (const key of Object.keys(e)) expectFieldEquivalent(a[key], e[key], `${path}.${key}`);
    return;
  }
  if (Array.isArray(expected)) {
    expect({ path, length: Array.isArray(actual) ? actual.length : -1 }).toEqual({
      path,
      length: expected.length,
    });
    expected.forEach((item, i) => expectFieldEquivalent((actual as unknown[])[i], item, `${path}[${i}]`));
    return;
  }
  expect({ path, value: actual }).toStrictEqual({ path, value: expected });
}

/** Runs `fn` and asserts it throws a 400 `import_parse_error` whose message matches. */
export function expectParseError(fn: () => unknown, message?: RegExp): DomainError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DomainError);
  const error = caught as DomainError;
  expect({ code: error.code, status: error.status }).toEqual({ code: 'import_parse_error', status: 400 });
  if (message) expect(error.message).toMatch(message);
  return error;
}
