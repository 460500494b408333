import { DomainError } from '../errors';
import {
  canonicalJson,
  DERIVED_OUTPUT_VALUE_MAX_BYTES,
  initialStatus,
  nextStatus,
  requireDomain,
  serialiseValue,
  updateAction,
  type DerivedOutputStatus,
} from './derived-output.rules';

const failure = (fn: () => unknown): { code: string; status: number } | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return { code: (error as DomainError).code, status: (error as DomainError).status };
  }
};

describe('derived output states', () => {
  it('creates draft by default, or published; never archived', () => {
    expect(initialStatus(undefined)).toBe('draft');
    expect(initialStatus('draft')).toBe('draft');
    expect(initialStatus('published')).toBe('published');
    expect(failure(() => initialStatus('archived'))).toEqual({
      code: 'derived_output_invalid_status',
      status: 400,
    });
    expect(failure(() => initialStatus('live'))).toEqual({
      code: 'derived_output_invalid_status',
      status: 400,
    });
  });

  const table: Array<[DerivedOutputStatus, string | undefined, DerivedOutputStatus | string]> = [
    ['draft', undefined, 'draft'],
    ['draft', 'draft', 'draft'],
    ['draft', 'published', 'published'],
    ['draft', 'archived', 'archived'],
    ['published', undefined, 'published'],
    ['published', 'published', 'published'],
    ['published', 'archived', 'archived'],
    ['published', 'draft', 'derived_output_invalid_status'],
    ['draft', 'deleted', 'derived_output_invalid_status'],
    ['archived', undefined, 'derived_output_archived_immutable'],
    ['archived', 'archived', 'derived_output_archived_immutable'],
    ['archived', 'draft', 'derived_output_archived_immutable'],
    ['archived', 'published', 'derived_output_archived_immutable'],
  ];
  it.each(table)('%s + %s -> %s', (from, requested, expected) => {
    if (expected.startsWith('derived_output_')) {
      const f = failure(() => nextStatus(from, requested));
      expect(f?.code).toBe(expected);
      expect(f?.status).toBe(expected === 'derived_output_archived_immutable' ? 409 : 400);
    } else {
      expect(nextStatus(from, requested)).toBe(expected);
    }
  });

  it('names an update that ends archived an archive', () => {
    expect(updateAction('draft', 'archived')).toBe('archive');
    expect(updateAction('published', 'archived')).toBe('archive');
    expect(updateAction('draft', 'published')).toBe('update');
    expect(updateAction('draft', 'draft')).toBe('update');
  });
});

describe('derived output domain', () => {
  it('accepts 1 to 128 characters, counted as code points', () => {
    expect(requireDomain('a')).toBe('a');
    expect(requireDomain('d'.repeat(128))).toHaveLength(128);
    expect(requireDomain('😀'.repeat(128))).toHaveLength(256);
  });

  it('refuses empty, 129 characters and non-strings with validation_error', () => {
    expect(failure(() => requireDomain(''))?.code).toBe('validation_error');
    expect(failure(() => requireDomain('d'.repeat(129)))?.code).toBe('validation_error');
    expect(failure(() => requireDomain('😀'.repeat(129)))?.code).toBe('validation_error');
    expect(failure(() => requireDomain(5))?.code).toBe('validation_error');
  });
});

describe('derived output value', () => {
  it('serialises plain JSON and counts UTF-8 bytes', () => {
    expect(serialiseValue({ a: [1, 'é', null, true] })).toEqual({
      json: '{"a":[1,"é",null,true]}',
      byteCount: 24,
    });
    expect(serialiseValue(null).json).toBe('null');
  });

  it('accepts exactly 256 KiB and refuses one byte more with 413', () => {
    const atLimit = 'x'.repeat(DERIVED_OUTPUT_VALUE_MAX_BYTES - 2);
    expect(serialiseValue(atLimit).byteCount).toBe(262144);
    expect(failure(() => serialiseValue(`${atLimit}x`))).toEqual({
      code: 'derived_output_payload_too_large',
      status: 413,
    });
  });

  it('refuses values that are not plain JSON with 400 payload_invalid', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let deep: unknown = 1;
    for (let i = 0; i < 130; i++) deep = [deep];
    for (const bad of [
      undefined,
      () => 1,
      10n,
      Symbol('s'),
      Number.NaN,
      Infinity,
      cyclic,
      new Date(0),
      new Map(),
      'a\u0000b',
      { 'k\u0000': 1 },
      deep,
    ]) {
      expect(failure(() => serialiseValue(bad))).toEqual({
        code: 'derived_output_payload_invalid',
        status: 400,
      });
    }
  });

  it('accepts a value shared twice without a cycle', () => {
    const shared = { x: 1 };
    expect(serialiseValue({ a: shared, b: shared }).json).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('compares values whatever their key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: 2 }));
  });
});
