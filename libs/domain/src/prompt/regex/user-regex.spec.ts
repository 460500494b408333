import fc from 'fast-check';
import { RE2JS } from 're2js';
import { compileGuarded } from './guarded-matcher';
import {
  compileUserRegex,
  estimateProgramSize,
  parseRegexLiteral,
  parseScriptRegex,
  USER_REGEX_LIMITS,
  UserRegex,
  userRegexCacheSize,
  userRegexCompileCost,
} from './user-regex';

function compiled(source: string, flags = ''): UserRegex {
  const result = compileUserRegex(source, flags);
  if (!result.ok) throw new Error(`${source} did not compile: ${result.message}`);
  return result.regex;
}

/** What V8 would report (the oracle, on the test's own fixed patterns only). */
function v8Matches(source: string, flags: string, text: string) {
  const re = new RegExp(source, flags.includes('g') ? flags : `${flags}g`);
  return [...text.matchAll(re)].map((m) => ({ index: m.index, groups: [...m] }));
}

function ours(regex: UserRegex, text: string) {
  return regex.matchAll(text).map((m) => ({ index: m.index, groups: m.groups }));
}

/** Every match of the guarded engine alone (JS matchAll iteration), whatever engine compileUserRegex picks. */
function guarded(source: string, flags: string, text: string) {
  const program = compileGuarded(source, flags);
  if (!program.ok) throw new Error(program.message);
  const out: { index: number; groups: (string | undefined)[] }[] = [];
  let from = 0;
  while (from <= text.length) {
    const found = program.program.search(text, from);
    if (found === null || found === 'aborted') break;
    const groups: (string | undefined)[] = [];
    for (let g = 0; 2 * g < found.length; g++) {
      groups.push(found[2 * g] < 0 ? undefined : text.slice(found[2 * g], found[2 * g + 1]));
    }
    out.push({ index: found[0], groups });
    from = found[1] === found[0] ? found[1] + 1 : found[1];
  }
  return out;
}

describe('parseRegexLiteral (ST parseRegexFromString, external-formats.md §d.3)', () => {
  it.each([
    ['/abc/', { source: 'abc', flags: '' }],
    ['/abc/gi', { source: 'abc', flags: 'gi' }],
    ['/a\\/b/i', { source: 'a/b', flags: 'i' }],
    // only the first escaped slash is unescaped, as ST's string replace does
    ['/a\\/b\\/c/', { source: 'a/b\\/c', flags: '' }],
    ['/multi\nline/s', { source: 'multi\nline', flags: 's' }],
    ['/x/gg', { source: 'x', flags: 'gg' }],
  ])('%j → %j', (text, expected) => {
    expect(parseRegexLiteral(text)).toEqual(expected);
  });

  it.each([
    ['plain key'],
    ['/a/b/'], // unescaped slash inside the body
    ['/abc/q'], // flag outside gimsuy
    ['//'], // empty body
    ['/abc'],
    ['abc/'],
    [' /abc/'],
  ])('%j is not a regex key', (text) => {
    expect(parseRegexLiteral(text)).toBeNull();
  });
});

describe('parseScriptRegex (ST regexFromString, §f findRegex)', () => {
  it.each([
    ['/abc/gi', { source: 'abc', flags: 'gi' }],
    ['abc', { source: 'abc', flags: '' }],
    ['/a/b/g', { source: 'a/b', flags: 'g' }],
    // flags outside gmixXsuUAJ (or repeated): the whole input is the pattern, without flags
    ['/abc/y', { source: '/abc/y', flags: '' }],
    ['/abc/gg', { source: '/abc/gg', flags: '' }],
    // x passes ST's flag check, then `new RegExp` rejects it (the script is skipped)
    ['/abc/x', { source: 'abc', flags: 'x' }],
    // `.` stops at a newline: ST reads only the first line's match
    ['/foo\nbar/g', { source: '/foo', flags: '' }],
  ])('%j → %j', (text, expected) => {
    expect(parseScriptRegex(text)).toEqual(expected);
  });

  it('answers null where ST would throw (nothing to match)', () => {
    expect(parseScriptRegex('\n')).toBeNull();
  });

  it('x flag is invalid once compiled, as ST would skip it', () => {
    const parsed = parseScriptRegex('/abc/x') as { source: string; flags: string };
    expect(compileUserRegex(parsed.source, parsed.flags)).toMatchObject({ ok: false, reason: 'invalid' });
  });
});

describe('compileUserRegex', () => {
  it.each([
    ['(', ''],
    ['a{2,1}', ''],
    ['x', 'gg'],
    ['x', 'q'],
    ['(?<a>x)(?<a>y)', ''],
  ])('%j with flags %j is invalid (JS rejects it)', (source, flags) => {
    const result = compileUserRegex(source, flags);
    expect(result).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it.each([
    ['a{1001}', ''],
    ['x', 'v'],
  ])('%j with flags %j is unsupported (valid JS, no engine runs it)', (source, flags) => {
    expect(compileUserRegex(source, flags)).toMatchObject({ ok: false, reason: 'unsupported' });
  });

  it.each([
    ['(a+)+$', 'linear'],
    ['(?<=foo)bar', 'linear'],
    ['(?<!foo)bar', 'linear'],
    ['foo(?=bar)', 'guarded'],
    ['foo(?!bar)', 'guarded'],
    ['(["\'])(.*?)\\1', 'guarded'],
    ['(?<q>["\'])x\\k<q>', 'guarded'],
    ['(?<=(f)oo)bar', 'guarded'], // lookbehind with a capture: re2js refuses it
  ])('%j runs on the %s engine', (source, engine) => {
    expect(compiled(source).engine).toBe(engine);
  });

  it('caches compilations by source and flags (LRU)', () => {
    const first = compileUserRegex('cache-me', 'i');
    expect(compileUserRegex('cache-me', 'i')).toBe(first);
    expect(compileUserRegex('cache-me', 'g')).not.toBe(first);
    expect(userRegexCacheSize()).toBeLessThanOrEqual(1000);
    for (let i = 0; i < 1100; i++) compileUserRegex(`lru-${i}`, '');
    expect(userRegexCacheSize()).toBe(1000);
    // the oldest entries were evicted, so a fresh compilation is a new object
    expect(compileUserRegex('cache-me', 'i')).not.toBe(first);
  });

  it('never throws on hostile input', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 6 }),
        fc.string({ maxLength: 60 }),
        (source, flags, text) => {
          const result = compileUserRegex(source, flags);
          if (result.ok) {
            result.regex.test(text);
            result.regex.replace(text, (m) => `<${m.text}>`);
          }
          return true;
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('JavaScript semantics on the linear engine (compared with V8 on fixed patterns)', () => {
  const cases: [string, string, string][] = [
    ['a.c', '', 'abc a\nc a\rc a\u2028c'],
    ['a.c', 's', 'abc a\nc a\rc'],
    ['\\s+', 'g', 'a \u00a0\t\u3000b\ufeffc'],
    ['\\S+', 'g', 'a \u00a0b'],
    ['[\\s,]+', 'g', 'a, \u00a0b'],
    ['(?<word>\\w+)-(\\d+)', 'g', 'ab-12 cd-3'],
    ['{{char}}', 'g', 'hi {{char}}!'],
    ['a{', '', 'xa{'],
    ['x{2}', 'g', 'xxx'],
    ['[[:alpha:]]', 'g', 'a:[]'],
    ['[]', 'g', 'abc'],
    ['[^]', 'g', 'a\nb'],
    ['\\u00e9|\\x41', 'g', 'éA'],
    ['\\u{1F600}', 'gu', 'x😀'],
    ['\\cJ', 'g', 'a\nb'],
    ['\\0', 'g', 'a\u0000b'],
    ['\\101', 'g', 'ABA'],
    ['^b', 'gm', 'a\nb\nb'],
    ['a$', 'g', 'a\na'],
    ['\\bcat\\b', 'gi', 'Cat concat cat.'],
    ['x*', 'g', 'axxb'],
    ['a|', 'g', 'ab'],
    ['(a)|(b)', 'g', 'ab'],
    ['\\e\\/', 'g', 'e/'],
    ['(?:ab)+?', 'g', 'ababab'],
    ['[a-c\\d]+', 'gi', 'AB1 z'],
  ];
  it.each(cases)('/%s/%s on %j', (source, flags, text) => {
    const regex = compiled(source, flags);
    expect(regex.engine).toBe('linear');
    expect(ours(regex, text)).toEqual(v8Matches(source, flags, text));
  });
});

describe('guarded engine (lookahead, backreferences) against V8 on fixed patterns', () => {
  const cases: [string, string, string][] = [
    ['foo(?=bar)', 'g', 'foobar foobaz'],
    ['foo(?!bar)', 'g', 'foobar foobaz'],
    ['(["\'])(.*?)\\1', 'g', `say "hi" and 'yo"' ok`],
    ['(?<q>["\'])x\\k<q>', 'g', `"x" 'x' "x'`],
    ['(?<=(f)oo)bar', 'g', 'foobar boobar'],
    ['(?<!\\d)\\d{2}(?!\\d)', 'g', '1 22 333 44'],
    ['(a)|b', 'g', 'ab'],
    ['(?:(a)|b)+', 'g', 'ab'],
    ['(\\w+)\\s\\1', 'gi', 'The the cat cat Dog'],
    ['^(?=.*\\d)\\w+$', 'gm', 'abc\nab1\n1'],
    ['(?=(a+))a*b\\1', '', 'baaabac'],
    ['x*(?=y)', 'g', 'xxy y'],
    ['(a*)*b', '', 'aab'],
    ['(?=a)*b', 'g', 'ab'],
    ['[^"]+(?="$)', '', 'say "hello"'],
    ['\\b(\\w)(\\w)?\\2?\\1\\b', 'g', 'aa abba aba'],
  ];
  it.each(cases)('/%s/%s on %j', (source, flags, text) => {
    expect(guarded(source, flags, text)).toEqual(v8Matches(source, flags, text));
    expect(ours(compiled(source, flags), text).map((m) => m.index)).toEqual(
      v8Matches(source, flags, text).map((m) => m.index),
    );
  });

  it('matches V8 on random inputs for every case (differential property test)', () => {
    const alphabet = fc.constantFrom('a', 'b', 'x', 'y', '1', '2', ' ', '"', "'", '\n', 'f', 'o');
    fc.assert(
      fc.property(
        fc.constantFrom(...cases),
        fc.array(alphabet, { maxLength: 24 }),
        ([source, flags], chars) => {
          const text = chars.join('');
          expect(guarded(source, flags, text)).toEqual(v8Matches(source, flags, text));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('the guarded engine also agrees with V8 on linear patterns (random inputs)', () => {
    const patterns: [string, string][] = [
      ['a+b*', 'g'],
      ['(a|ab)(c|bcd)?', 'g'],
      ['[^a]x?', 'gi'],
      ['(?:a|b)*?1', 'g'],
      ['\\s*\\w{1,2}', 'g'],
      ['^|$', 'gm'],
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...patterns),
        fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd', '1', 'x', ' ', '\n', 'A'), maxLength: 20 }),
        ([source, flags], text) => {
          expect(guarded(source, flags, text)).toEqual(v8Matches(source, flags, text));
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('documented linear-engine divergence: captures inside repeated groups (decisions.md)', () => {
  it.each([
    ['(?:(a)|b)+', 'ab', ['ab', 'a'], ['ab', undefined]],
    ['(a*)*b', 'b', ['b', ''], ['b', undefined]],
  ])('/%s/ on %j: same match, RE2 keeps the group JS resets', (source, text, linear, js) => {
    expect(compiled(source).firstMatch(text)?.groups).toEqual(linear);
    expect([...(new RegExp(source).exec(text) as RegExpExecArray)]).toEqual(js);
    expect(guarded(source, '', text)[0].groups).toEqual(js);
  });
});

describe('catastrophic patterns never stall the process (issue 4 item 4; performance-and-reliability.md)', () => {
  const hostile = 'a'.repeat(50_000) + '!';

  it('(a+)+$ on 50,000 "a"s + "!" runs on the linear engine and finds no match', () => {
    const regex = compiled('(a+)+$');
    expect(regex.engine).toBe('linear');
    expect(regex.test(hostile)).toBe(false);
    expect(regex.replace(hostile, () => 'X')).toBe(hostile);
    expect(regex.lastAborted).toBe(false);
  });

  it('a catastrophic pattern that needs the guarded engine is abandoned at its step budget', () => {
    const regex = compiled('(a+)+(?=b)$');
    expect(regex.engine).toBe('guarded');
    expect(regex.test(hostile)).toBe(false);
    expect(regex.lastAborted).toBe(true);
    expect(regex.replace(hostile, () => 'X')).toBe(hostile);
    expect(regex.lastAborted).toBe(true);
    expect(regex.matchAll(hostile)).toEqual([]);
  });

  it('a benign guarded pattern finishes on a long text without tripping the guard', () => {
    const text = 'word '.repeat(10_000) + 'foobar';
    const regex = compiled('foo(?=bar)', 'g');
    expect(regex.firstMatch(text)?.index).toBe(50_000);
    expect(regex.lastAborted).toBe(false);
    const greedy = compiled('(.)(?=\\1)', 'g');
    expect(greedy.matchAll('ab'.repeat(20_000) + 'cc')).toHaveLength(1);
    expect(greedy.lastAborted).toBe(false);
  });

  it('a failed attempt at one start leaves no capture for the next (slots are undone, not refilled)', () => {
    const regex = compiled('(a)(?=z)|(b)', 'g');
    expect(regex.engine).toBe('guarded');
    expect(regex.matchAll('ab').map((m) => m.groups)).toEqual([['b', undefined, 'b']]);
    expect(compiled('(?=(a))?(a)(?=z)|(a)b').firstMatch('aab')?.groups).toEqual([
      'ab',
      undefined,
      undefined,
      'a',
    ]);
  });

  it('work over many groups counts against the budget: 1,000 groups, a lookahead at each of 200,000 starts', () => {
    const regex = compiled(`(?=x)${'(a)?'.repeat(1_000)}q`, 'g');
    expect(regex.engine).toBe('guarded');
    expect(regex.matchAll('b'.repeat(500))).toEqual([]);
    expect(regex.lastAborted).toBe(false);
    // Each lookahead copies 2,004 slots: 125 steps; 200,000 starts are past 100,000 + 30 per character.
    expect(regex.matchAll('b'.repeat(200_000))).toEqual([]);
    expect(regex.lastAborted).toBe(true);
  });
});

describe('UserRegex helpers', () => {
  it('linear replace streams matches to the replacer in order; the replacer may use the same (cached) regex', () => {
    const regex = compiled('(\\w)(\\d)?', 'g');
    expect(regex.engine).toBe('linear');
    const seen: number[] = [];
    const out = regex.replace('a1 b c2', (m) => {
      seen.push(m.index);
      // The same compiled object, another text: must not disturb the outer iteration.
      expect(compiled('(\\w)(\\d)?', 'g').matchAll('zz')).toHaveLength(2);
      return `<${m.groups[1]}${m.groups[2] ?? '-'}>`;
    });
    expect(out).toBe('<a1> <b-> <c2>');
    expect(seen).toEqual([0, 3, 5]);
  });

  it('replace agrees with V8 String#replace (linear and lookbehind patterns, every flag shape, random inputs)', () => {
    const patterns = ['a', 'a|b', '', 'x*', '(?<=a)b', '(?<!a)b', '\\bab', '(a)(b)?', 'b$', '^a'];
    fc.assert(
      fc.property(
        fc.constantFrom(...patterns),
        fc.constantFrom('', 'g', 'y', 'gy', 'gu', 'gm', 'gi'),
        fc.stringMatching(/^[abAB x\n]{0,10}$/),
        (source, flags, text) => {
          const regex = compiled(source, flags);
          let k = 0;
          const ours = regex.replace(text, (m) => `[${k++}:${m.index}:${m.text}]`);
          let j = 0;
          const v8 = text.replace(new RegExp(source, flags), (m: string, ...rest: unknown[]) => {
            const index = rest.find((r) => typeof r === 'number') as number;
            return `[${j++}:${index}:${m}]`;
          });
          expect(ours).toBe(v8);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('firstMatch reports index, end, groups and named groups', () => {
    const match = compiled('(?<name>\\w+)=(\\d+)?').firstMatch('x: key=');
    expect(match).toEqual({
      index: 3,
      end: 7,
      text: 'key=',
      groups: ['key=', 'key', undefined],
      named: { name: 'key' },
    });
  });

  it('firstMatch honours from', () => {
    expect(compiled('a').firstMatch('aXa', 1)?.index).toBe(2);
    expect(compiled('a').firstMatch('aXa', 4)).toBeNull();
  });

  it('sticky (y) only matches at the start position, and global+sticky matches contiguously', () => {
    expect(compiled('b', 'y').test('ab')).toBe(false);
    expect(compiled('a', 'y').test('ab')).toBe(true);
    const replaced = compiled('a', 'gy').replace('aaba', () => 'X');
    expect(replaced).toBe('aaba'.replace(/a/gy, 'X'));
  });

  it('replace without g replaces the first match only; with g every match', () => {
    expect(compiled('o').replace('foo', () => '0')).toBe('f0o');
    expect(compiled('o', 'g').replace('foo', () => '0')).toBe('f00');
  });

  it('empty matches advance by a code point with u and a code unit without it', () => {
    expect(
      compiled('', 'gu')
        .matchAll('😀')
        .map((m) => m.index),
    ).toEqual([0, 2]);
    expect(
      compiled('', 'g')
        .matchAll('😀')
        .map((m) => m.index),
    ).toEqual([0, 1, 2]);
  });
});

describe('differential fuzz against V8 on generated patterns (fixed grammar, test-side oracle)', () => {
  const atom = fc.constantFrom(
    'a',
    'b',
    'A',
    ' ',
    '.',
    '\\s',
    '\\S',
    '\\d',
    '\\w',
    '\\W',
    '[a-c]',
    '[^ab]',
    '[\\s1]',
    '\\n',
    '\\.',
    '{',
    '}',
    'é',
  );
  const { pattern } = fc.letrec<{ pattern: string; term: string; group: string }>((tie) => ({
    pattern: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.array(tie('term'), { minLength: 1, maxLength: 4 }).map((t) => t.join('')),
      fc.tuple(tie('term'), tie('term')).map(([x, y]) => `${x}|${y}`),
    ),
    term: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      atom,
      fc.constantFrom('^', '$', '\\b', '\\B', '\\1', '\\2', '\\k<n>'),
      fc
        .tuple(tie('group'), fc.constantFrom('', '*', '+', '?', '{1,2}', '*?', '+?', '??', '{0,}'))
        .map(([g, q]) => g + q),
      fc.tuple(atom, fc.constantFrom('*', '+', '?', '{2}', '*?')).map(([a, q]) => a + q),
    ),
    group: fc
      .tuple(fc.constantFrom('(', '(?:', '(?<n>', '(?=', '(?!', '(?<=', '(?<!'), tie('pattern'))
      .map(([open, body]) => `${open}${body})`),
  }));
  // Group bodies that can never match empty: RE2 has no "an empty iteration ends the loop" rule, so a
  // nullable repeated group may end elsewhere than in JS (documented divergence, decisions.md).
  const solidTerm = fc.oneof(
    atom,
    fc.tuple(atom, fc.constantFrom('+', '{2}', '+?')).map(([a, q]) => a + q),
  );
  const solidBody = fc.oneof(
    fc.array(solidTerm, { minLength: 1, maxLength: 3 }).map((t) => t.join('')),
    fc.tuple(solidTerm, solidTerm).map(([x, y]) => `${x}|${y}`),
  );
  const solidPattern = fc
    .array(
      fc.oneof(
        solidTerm,
        fc.constantFrom(
          '^',
          '$',
          '\\b',
          '\\B',
          'a?',
          '.*',
          '\\s*?',
          '(?<=a)',
          '(?<!b)',
          '(?<=\\s|^)',
          '(?<=a.)',
        ),
        fc
          .tuple(
            fc.constantFrom('(', '(?:', '(?<n>'),
            solidBody,
            fc.constantFrom('', '*', '+', '?', '{1,2}', '*?', '??'),
          )
          .map(([open, body, q]) => `${open}${body})${q}`),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((t) => t.join(''));
  const flags = fc.constantFrom('g', 'gi', 'gm', 'gs', 'gim', 'gu');
  const text = fc.string({
    unit: fc.constantFrom('a', 'b', 'A', 'c', '1', ' ', '\n', '.', 'é', '_', '{'),
    maxLength: 16,
  });

  const valid = (source: string, f: string) => {
    try {
      new RegExp(source, f);
      return !/\(\?<n>.*\(\?<n>/.test(source);
    } catch {
      return false;
    }
  };

  it('linear engine: same match spans as V8', () => {
    fc.assert(
      fc.property(solidPattern, flags, text, (source, f, input) => {
        fc.pre(valid(source, f));
        const result = compileUserRegex(source, f);
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        const spans = result.regex.matchAll(input).map((m) => [m.index, m.end]);
        const expected = [...input.matchAll(new RegExp(source, f))].map((m) => [
          m.index,
          m.index + m[0].length,
        ]);
        expect(spans).toEqual(expected);
      }),
      { numRuns: 1500 },
    );
  });

  it('guarded engine: same spans and captures as V8', () => {
    fc.assert(
      fc.property(pattern, flags, text, (source, f, input) => {
        fc.pre(valid(source, f));
        expect(guarded(source, f, input)).toEqual(v8Matches(source, f, input));
      }),
      { numRuns: 1500 },
    );
  });
});

describe('compile bounds (USER_REGEX_LIMITS): re2js compiles at ~1-6 µs a unit, superlinearly when large', () => {
  const { maxSourceLength, maxProgramSize } = USER_REGEX_LIMITS;

  it('a pattern of maxSourceLength characters compiles; one more is unsupported, refused without compiling', () => {
    const at = 'abcdefghij'.repeat(maxSourceLength / 10 - 1) + 'klmnopqrs' + 'L';
    expect(at).toHaveLength(maxSourceLength);
    expect(compileUserRegex(at, 'g').ok).toBe(true);
    const size = userRegexCacheSize();
    const past = compileUserRegex(`${at}M`, 'g');
    expect(past).toEqual({
      ok: false,
      reason: 'unsupported',
      message: `pattern is ${maxSourceLength + 1} characters long; at most ${maxSourceLength}`,
    });
    expect(userRegexCacheSize()).toBe(size); // not cached: a refused key would hold memory
    expect(userRegexCompileCost(`${at}M`)).toBe(0);
    // An invalid pattern that long is refused the same way (the length is checked first).
    expect(compileUserRegex(`(${'a'.repeat(maxSourceLength)}`, '')).toMatchObject({ reason: 'unsupported' });
    // A megabyte (2.2 s before) is refused at once.
    expect(compileUserRegex('a|'.repeat(500_000), 'g')).toMatchObject({ ok: false, reason: 'unsupported' });
  });

  it('counted repeats count expanded: a program estimated over maxProgramSize is unsupported', () => {
    // 99 x a{1000} + 999 other atoms = 99,999 + 1 → at the limit (re2js's own limit is 1,398,101).
    const at = `${'a{1000}'.repeat(99)}${'b'.repeat(1000)}`;
    expect(estimateProgramSize(at)).toBe(maxProgramSize);
    expect(compileUserRegex(at, 'g').ok).toBe(true);
    expect(userRegexCompileCost(at)).toBe(maxProgramSize);
    const past = `${at}c`;
    expect(compileUserRegex(past, 'g')).toMatchObject({ ok: false, reason: 'unsupported' });
    expect(userRegexCompileCost(past)).toBe(past.length); // refused after the syntax check only
    // 980 characters that expand to 140,000 instructions (100 characters of 14,000 took 0.27 s); nested
    // repeats multiply.
    expect(compileUserRegex('a{1000}'.repeat(140), 'g')).toMatchObject({ ok: false, reason: 'unsupported' });
    expect(estimateProgramSize('(?:(?:a{100}){100}){100}')).toBeGreaterThan(maxProgramSize);
    expect(compileUserRegex('(?:(?:a{100}){100}){100}', '')).toMatchObject({ reason: 'unsupported' });
    // Braced escapes are one atom, not a quantifier.
    expect(estimateProgramSize('\\u{10000}\\p{L}\\P{Lu}')).toBe(3);
    expect(compileUserRegex('\\u{20000}+', 'u').ok).toBe(true);
    // The guarded engine gets the same bound.
    expect(compileUserRegex(`(?=a)${'b{1000}'.repeat(101)}`, '')).toMatchObject({ reason: 'unsupported' });
  });

  it("estimateProgramSize is never below re2js's program by more than 2 instructions (property)", () => {
    const atom = fc.constantFrom(
      'a',
      'b',
      '.',
      '\\d',
      '[a-z]',
      '[^x]',
      '[]a]',
      '\\w',
      'ab',
      '\\u0041',
      '\\.',
      '\\{',
      '{',
    );
    const quant = fc.constantFrom(
      '',
      '',
      '*',
      '+',
      '?',
      '{2}',
      '{3,}',
      '{0,5}',
      '{4,7}',
      '*?',
      '{10}',
      '{1,20}',
    );
    const pattern = fc.letrec<{ seq: string; group: string }>((tie) => ({
      seq: fc
        .array(
          fc.tuple(fc.oneof({ weight: 4, arbitrary: atom }, { weight: 1, arbitrary: tie('group') }), quant),
          {
            minLength: 1,
            maxLength: 4,
          },
        )
        .map((parts) => parts.map(([a, q]) => (a === '{' ? '\\{' : a) + q).join('')),
      group: fc
        .tuple(fc.constantFrom('(', '(?:'), tie('seq'), fc.option(tie('seq')))
        .map(([open, a, b]) => `${open}${a}${b === null ? '' : `|${b}`})`),
    })).seq;
    fc.assert(
      fc.property(pattern, (source) => {
        let actual: number;
        try {
          actual = RE2JS.compile(source).programSize();
        } catch {
          return; // RE2 refuses it (e.g. a quantified quantifier); not a size question
        }
        expect(actual).toBeLessThanOrEqual(estimateProgramSize(source) + 2);
      }),
      { numRuns: 3000 },
    );
  });
});
