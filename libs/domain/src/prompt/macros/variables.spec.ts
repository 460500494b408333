import { JSON_MAX_DEPTH } from '../../text/json-depth';
import { MAX_VARIABLE_PATH_SEGMENTS, normalizeRead, stableStringify, VariableOverlay } from './variables';

describe('variable overlay (spec 2 "Macro compatibility"; ST variables.js createVariableScope)', () => {
  it.each([
    ['number stays a number', 4, 4],
    ['numeric string becomes a number', '5', 5],
    ['empty string', '', ''],
    ['missing', undefined, ''],
    ['null reads as ""', null, ''],
    ['text', 'abc', 'abc'],
    ['boolean reads as text', true, 'true'],
    ['object reads as JSON text', { b: 1, a: 2 }, '{"b":1,"a":2}'],
    ['array of one number stays JSON text', [5], '[5]'],
  ])('normalizeRead: %s', (_rule, value, expected) => {
    expect(normalizeRead(value as never)).toEqual(expected);
  });

  it('reads flat keys before paths', () => {
    const overlay = new VariableOverlay({ local: { 'a.b': 'flat', a: { b: 'nested' } } });
    expect(overlay.get('local', 'a.b')).toBe('flat');
    expect(overlay.get('local', 'a')).toBe('{"b":"nested"}');
  });

  it('reads paths into native JSON, JSON strings and arrays; a missing path is ""', () => {
    const overlay = new VariableOverlay({
      local: { o: { list: [{ n: 1 }, { n: 2 }] }, s: '{"deep":{"v":"x"}}' },
    });
    expect(overlay.get('local', 'o.list.1.n')).toBe(2);
    expect(overlay.get('local', 's.deep.v')).toBe('x');
    expect(overlay.get('local', 'o.list.9.n')).toBe('');
    expect(overlay.get('local', 'o.missing')).toBe('');
    expect(overlay.has('local', 'o.list.0')).toBe(true);
    expect(overlay.has('local', 'o.nope')).toBe(false);
  });

  it('a path write stores the root key (native stays native, JSON string stays a string)', () => {
    const overlay = new VariableOverlay({ local: { o: { a: 1 }, s: '{"a":1}' } });
    overlay.set('local', 'o.b.c', 'x', 'setvar');
    overlay.set('local', 's.b', 'y', 'setvar');
    expect(overlay.snapshot('local')).toEqual({ o: { a: 1, b: { c: 'x' } }, s: '{"a":1,"b":"y"}' });
    expect(overlay.mutations().map((m) => [m.key, m.name, m.after])).toEqual([
      ['o', 'o.b.c', '{"a":1,"b":{"c":"x"}}'],
      ['s', 's.b', '{"a":1,"b":"y"}'],
    ]);
  });

  it('a dotted name without an existing JSON root is a flat key', () => {
    const overlay = new VariableOverlay({ local: { t: 'text' } });
    overlay.set('local', 't.x', '1', 'setvar');
    overlay.set('local', 'new.key', '2', 'setvar');
    expect(overlay.snapshot('local')).toEqual({ t: 'text', 't.x': '1', 'new.key': '2' });
  });

  it.each([
    ['numbers add', 2, '3', 5],
    ['numeric strings add', '2', '3', 5],
    ['text concatenates', 'ab', 'c', 'abc'],
    ['number plus text concatenates', 2, 'x', '2x'],
    ['missing plus number', undefined, '4', 4],
    ['missing plus text', undefined, 'hi', 'hi'],
    ['JSON array string appends', '[1]', '2', '[1,"2"]'],
  ])('add: %s', (_rule, start, operand, expected) => {
    const overlay = new VariableOverlay({ local: start === undefined ? {} : { v: start } });
    overlay.add('local', 'v', operand, 'addvar');
    expect(overlay.snapshot('local').v).toEqual(expected);
  });

  it('add to a native array pushes natively', () => {
    const overlay = new VariableOverlay({ local: { arr: ['a'] } });
    overlay.add('local', 'arr', 'b', 'addvar');
    expect(overlay.snapshot('local').arr).toEqual(['a', 'b']);
  });

  it('inc/dec are add ±1 and return the new value', () => {
    const overlay = new VariableOverlay({});
    expect(overlay.add('local', 'c', 1, 'incvar', 'inc')).toBe(1);
    expect(overlay.add('local', 'c', 1, 'incvar', 'inc')).toBe(2);
    expect(overlay.add('local', 'c', -1, 'decvar', 'dec')).toBe(1);
  });

  it('never changes the views it was given', () => {
    const local = { a: { b: 1 }, n: 1 };
    const overlay = new VariableOverlay({ local });
    overlay.set('local', 'a.b', '2', 'setvar');
    overlay.add('local', 'n', 5, 'addvar');
    overlay.delete('local', 'n', 'deletevar');
    expect(local).toEqual({ a: { b: 1 }, n: 1 });
  });

  it('records ordered staged mutations with before/after and a preview of final values', () => {
    const overlay = new VariableOverlay({ local: { n: 1, o: { z: 1, a: 2 } }, global: { g: 'x' } });
    overlay.add('local', 'n', 1, 'incvar', 'inc');
    overlay.set('global', 'g', 'y', 'setglobalvar');
    overlay.add('local', 'n', 3, 'addvar');
    overlay.set('local', 'o.m', '0', 'setvar');
    overlay.delete('global', 'g', 'deleteglobalvar');
    expect(overlay.mutations()).toEqual([
      {
        scope: 'local',
        key: 'n',
        name: 'n',
        op: 'inc',
        value: 1,
        before: 1,
        after: 2,
        existed: true,
        deleted: false,
        macro: 'incvar',
      },
      {
        scope: 'global',
        key: 'g',
        name: 'g',
        op: 'set',
        value: 'y',
        before: 'x',
        after: 'y',
        existed: true,
        deleted: false,
        macro: 'setglobalvar',
      },
      {
        scope: 'local',
        key: 'n',
        name: 'n',
        op: 'add',
        value: 3,
        before: 2,
        after: 5,
        existed: true,
        deleted: false,
        macro: 'addvar',
      },
      {
        scope: 'local',
        key: 'o',
        name: 'o.m',
        op: 'set',
        value: '0',
        before: '{"a":2,"z":1}',
        after: '{"a":2,"m":"0","z":1}',
        existed: true,
        deleted: false,
        macro: 'setvar',
      },
      {
        scope: 'global',
        key: 'g',
        name: 'g',
        op: 'delete',
        value: null,
        before: 'y',
        after: null,
        existed: true,
        deleted: true,
        macro: 'deleteglobalvar',
      },
    ]);
    expect(overlay.preview()).toEqual({
      local: { n: 5, o: '{"a":2,"m":"0","z":1}' },
      global: { g: null },
      deleted: { local: [], global: ['g'] },
    });
  });

  it('deleting a missing name records nothing; deleting a path rewrites the root', () => {
    const overlay = new VariableOverlay({ local: { o: { a: 1, b: 2 } } });
    expect(overlay.delete('local', 'missing', 'deletevar')).toBe(false);
    expect(overlay.delete('local', 'o.a', 'deletevar')).toBe(true);
    expect(overlay.snapshot('local')).toEqual({ o: { b: 2 } });
    expect(overlay.mutations()).toHaveLength(1);
  });

  it('stableStringify sorts keys at every level', () => {
    expect(stableStringify({ b: { d: 1, c: [{ f: 1, e: 2 }] }, a: null })).toBe(
      '{"a":null,"b":{"c":[{"e":2,"f":1}],"d":1}}',
    );
  });
});

describe('variable overlay bounds (hostile text must not stall or overflow)', () => {
  const nested = (levels: number, leaf: JsonLeaf): Record<string, unknown> => {
    let node: Record<string, unknown> = { v: leaf };
    for (let i = 1; i < levels; i++) node = { a: node };
    return node;
  };
  type JsonLeaf = string | number;
  const dotted = (segments: number) => ['o', ...Array<string>(segments).fill('a')].join('.');

  it(`reads a path of exactly MAX_VARIABLE_PATH_SEGMENTS (${MAX_VARIABLE_PATH_SEGMENTS}) segments`, () => {
    const overlay = new VariableOverlay({ local: { o: nested(MAX_VARIABLE_PATH_SEGMENTS, 'deep') } });
    const name = `${dotted(MAX_VARIABLE_PATH_SEGMENTS - 1)}.v`;
    expect(overlay.get('local', name)).toBe('deep');
  });

  it('takes a name of one segment more as a flat key only, and a 60,000-segment name at once', () => {
    const overlay = new VariableOverlay({ local: { o: nested(MAX_VARIABLE_PATH_SEGMENTS + 1, 'deep') } });
    expect(overlay.get('local', `${dotted(MAX_VARIABLE_PATH_SEGMENTS)}.v`)).toBe('');
    expect(overlay.has('local', dotted(60_000))).toBe(false);
    overlay.set('local', dotted(MAX_VARIABLE_PATH_SEGMENTS + 1), 'flat', 'setvar');
    expect(overlay.snapshot('local')[dotted(MAX_VARIABLE_PATH_SEGMENTS + 1)]).toBe('flat');
    expect(overlay.snapshot('local').o).toEqual(nested(MAX_VARIABLE_PATH_SEGMENTS + 1, 'deep'));
  });

  it(`a JSON text nested deeper than ${JSON_MAX_DEPTH} levels is text, not a container`, () => {
    const deep = '['.repeat(JSON_MAX_DEPTH + 1) + ']'.repeat(JSON_MAX_DEPTH + 1);
    const atLimit = '['.repeat(JSON_MAX_DEPTH) + ']'.repeat(JSON_MAX_DEPTH);
    const overlay = new VariableOverlay({ local: { deep, atLimit, huge: '['.repeat(100_000) } });
    expect(overlay.get('local', 'deep.0')).toBe('');
    expect(overlay.get('local', 'atLimit.0')).toBe(
      '['.repeat(JSON_MAX_DEPTH - 1) + ']'.repeat(JSON_MAX_DEPTH - 1),
    );
    expect(overlay.get('local', 'huge.0')).toBe('');
  });

  it(`refuses a path write whose root nests deeper than ${JSON_MAX_DEPTH} levels, like a too-long value`, () => {
    // With at most MAX_VARIABLE_PATH_SEGMENTS segments a write adds at most that many levels; a root
    // past the bound can only come from stored views (older data), and is not written back deeper.
    const refused: string[] = [];
    const overlay = new VariableOverlay(
      { local: { deep: nested(JSON_MAX_DEPTH + 10, 1), ok: nested(JSON_MAX_DEPTH - 10, 1) } },
      { onLimit: (_scope, name) => refused.push(name) },
    );
    overlay.set('local', 'deep.b', 'x', 'setvar');
    expect(refused).toEqual(['deep.b']);
    expect(overlay.snapshot('local').deep).toEqual(nested(JSON_MAX_DEPTH + 10, 1));
    overlay.set('local', 'ok.b', 'y', 'setvar');
    expect(refused).toHaveLength(1);
    expect(overlay.get('local', 'ok.b')).toBe('y');
  });
});

describe('variable overlay cost bounds (each read or write of a large value is paid once)', () => {
  const big = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i));

  afterEach(() => jest.restoreAllMocks());

  it('parses a JSON text once for any number of path reads, and again only after it changes', () => {
    const overlay = new VariableOverlay({ local: { big } });
    const parse = jest.spyOn(JSON, 'parse');
    for (let i = 0; i < 1000; i++) expect(overlay.get('local', 'big.5')).toBe(5);
    expect(parse).toHaveBeenCalledTimes(1);
    overlay.set('local', 'big.5', 'five', 'setvar');
    expect(overlay.get('local', 'big.5')).toBe('five');
    expect(overlay.get('local', 'big.6')).toBe(6);
  });

  it('serialises an object read as text once for any number of reads', () => {
    const overlay = new VariableOverlay({ local: { obj: { list: JSON.parse(big) as number[] } } });
    const stringify = jest.spyOn(JSON, 'stringify');
    for (let i = 0; i < 1000; i++) expect(overlay.get('local', 'obj')).toBe(`{"list":${big}}`);
    expect(stringify.mock.calls.length).toBeLessThanOrEqual(1);
  });

  it('stages writes up to the write budget, counts what each write staged, and refuses the next one', () => {
    const refused: Array<[string, string]> = [];
    const probe = new VariableOverlay();
    probe.set('local', 'a', 'xxxx', 'setvar');
    const perWrite = probe.writtenCharacters();
    expect(perWrite).toBeGreaterThan(0);

    const overlay = new VariableOverlay(
      {},
      { maxWrittenChars: 2 * perWrite, onLimit: (_scope, name, reason) => refused.push([name, reason]) },
    );
    overlay.set('local', 'a', 'xxxx', 'setvar');
    overlay.set('local', 'b', 'xxxx', 'setvar');
    expect(overlay.writtenCharacters()).toBe(2 * perWrite);
    // At the budget: one more write is still staged; past it, every write is refused and reported.
    overlay.set('local', 'c', 'xxxx', 'setvar');
    expect(refused).toEqual([]);
    overlay.set('local', 'd', 'xxxx', 'setvar');
    expect(overlay.add('local', 'a', 'y', 'addvar')).toBe('');
    expect(overlay.delete('local', 'b', 'deletevar')).toBe(false);
    expect(refused).toEqual([
      ['d', 'write_budget'],
      ['a', 'write_budget'],
      ['b', 'write_budget'],
    ]);
    expect(overlay.snapshot('local')).toEqual({ a: 'xxxx', b: 'xxxx', c: 'xxxx' });
    expect(overlay.mutationCount()).toBe(3);
  });
});
