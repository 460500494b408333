import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compatReport, withRegexDefaults } from '../../formats/regex-scripts';
import {
  applyRegexScripts,
  classifyRegexScripts,
  newRegexCompileBudget,
  REGEX_LIMITS,
  RegexRunContext,
  sanitizeRegexMacro,
  ScopedRegexScript,
} from './regex-runtime';
import { USER_REGEX_LIMITS } from './user-regex';

const script = (fields: Record<string, unknown>) => ({
  id: String(fields.scriptName ?? 'id'),
  scriptName: 'rule',
  findRegex: '/x/g',
  replaceString: 'y',
  trimStrings: [],
  placement: [2],
  disabled: false,
  markdownOnly: false,
  promptOnly: false,
  runOnEdit: false,
  substituteRegex: 0,
  minDepth: null,
  maxDepth: null,
  ...fields,
});

const stored: RegexRunContext = { placement: 2, mode: 'stored' };
const macros = (text: string, escape?: (v: string) => string) =>
  text.replace(/{{(\w+)}}/g, (_, name: string) => {
    const value = ({ char: 'Seraphina', user: 'A.J.', tag: 'b|c' } as Record<string, string>)[name];
    if (value === undefined) return `{{${name}}}`;
    return escape ? escape(value) : value;
  });

describe('applyRegexScripts (external-formats.md §f)', () => {
  describe('placement: the string must be in the script placement (1 user input, 2 AI output, 3 slash command, 5 world info, 6 reasoning)', () => {
    it.each([1, 2, 3, 5, 6])('placement %i', (placement) => {
      const rules = [script({ placement: [placement] })];
      expect(applyRegexScripts(rules, 'x', { placement, mode: 'stored' }).text).toBe('y');
      const other = placement === 2 ? 1 : 2;
      expect(applyRegexScripts(rules, 'x', { placement: other, mode: 'stored' }).text).toBe('x');
    });
  });

  describe('mode gate: markdownOnly only for display, promptOnly only for the prompt, neither only on the stored text', () => {
    it.each([
      // markdownOnly, promptOnly, mode, runs
      [false, false, 'stored', true],
      [false, false, 'prompt', false],
      [false, false, 'display', false],
      [true, false, 'display', true],
      [true, false, 'prompt', false],
      [true, false, 'stored', false],
      [false, true, 'prompt', true],
      [false, true, 'display', false],
      [false, true, 'stored', false],
      [true, true, 'prompt', true],
      [true, true, 'display', true],
      [true, true, 'stored', false],
    ] as const)('markdownOnly=%s promptOnly=%s mode=%s → runs %s', (markdownOnly, promptOnly, mode, runs) => {
      const out = applyRegexScripts([script({ markdownOnly, promptOnly })], 'x', { placement: 2, mode });
      expect(out.text).toBe(runs ? 'y' : 'x');
    });
  });

  it('disabled scripts never run', () => {
    expect(applyRegexScripts([script({ disabled: true })], 'x', stored).text).toBe('x');
  });

  it('edits: only runOnEdit scripts run when the user edits a message', () => {
    const rules = [
      script({ scriptName: 'a', findRegex: '/a/', replaceString: 'A', runOnEdit: true }),
      script({ scriptName: 'b', findRegex: '/b/', replaceString: 'B' }),
    ];
    expect(applyRegexScripts(rules, 'ab', { ...stored, isEdit: true }).text).toBe('Ab');
    expect(applyRegexScripts(rules, 'ab', stored).text).toBe('AB');
  });

  describe('depth: skip if minDepth ≥ −1 and depth < minDepth; skip if maxDepth ≥ 0 and depth > maxDepth', () => {
    it.each([
      // minDepth, maxDepth, depth, runs
      [null, null, 5, true],
      [2, null, 1, false],
      [2, null, 2, true],
      [-1, null, -1, true],
      [0, null, -1, false],
      [-2, null, -5, true], // below −1 the bound is ignored
      [null, 3, 3, true],
      [null, 3, 4, false],
      [null, -1, 99, true], // a negative maxDepth is ignored
      [1, 3, 0, false],
      [1, 3, 2, true],
      ['2', null, 1, false], // ST compares the raw value: a numeric string still counts
    ] as const)('minDepth=%s maxDepth=%s depth=%s → runs %s', (minDepth, maxDepth, depth, runs) => {
      const out = applyRegexScripts([script({ minDepth, maxDepth })], 'x', { ...stored, depth });
      expect(out.text).toBe(runs ? 'y' : 'x');
    });

    it('without a depth (not prompt building) the bounds are not checked', () => {
      expect(applyRegexScripts([script({ minDepth: 5, maxDepth: 6 })], 'x', stored).text).toBe('y');
    });
  });

  describe('replacement: $N, $<name>, {{match}}, missing groups, trimStrings, macros at the end', () => {
    it.each([
      ['/(\\w+)@(\\w+)/', '$2 at $1', 'me@host', 'host at me'],
      ['/(?<user>\\w+)@(?<host>\\w+)/', '$<host>/$<user>', 'me@host', 'host/me'],
      ['/b+/g', '[{{match}}]', 'abbcb', 'a[bb]c[b]'],
      ['/b+/g', '[{{MATCH}}|$0]', 'abb', 'a[bb|bb]'],
      ['/(a)|(b)/g', '<$1$2>', 'ab', '<a><b>'],
      ['/(a)/', '$<missing>$9x', 'a', 'x'],
      ['/a/', "$$ $& $'", 'a', "$$ $& $'"],
      ['/x/', '$1', 'ax', 'a1'], // ST quirk: $N past the groups is the offset, then the input
      ['/x/', '$1', 'x', ''], // offset 0 is falsy → ""
      ['/x/', '[$2]', 'ax', 'a[ax]'],
      ['/(\\w+)/', 'Hi {{char}}, $1', 'there', 'Hi Seraphina, there'],
      ['/(\\w+)/', '{{$1}}!', 'user', 'A.J.!'], // macros run on the built replacement, group text included
    ])('%s with %j on %j → %j', (findRegex, replaceString, text, expected) => {
      const out = applyRegexScripts([script({ findRegex, replaceString })], text, {
        ...stored,
        substitute: macros,
      });
      expect(out.text).toBe(expected);
    });

    it('trimStrings are removed from each inserted group (macro-substituted), not from the template', () => {
      const rules = [
        script({
          findRegex: '/<(.+?)>/g',
          replaceString: '[*$1*]',
          trimStrings: ['*', '{{char}}: '],
        }),
      ];
      const out = applyRegexScripts(rules, '<*hi*> <Seraphina: yo>', { ...stored, substitute: macros });
      expect(out.text).toBe('[*hi*] [*yo*]');
    });

    it('without g only the first match is replaced; with g every match', () => {
      expect(applyRegexScripts([script({ findRegex: '/x/' })], 'xx', stored).text).toBe('yx');
      expect(applyRegexScripts([script({ findRegex: '/x/g' })], 'xx', stored).text).toBe('yy');
    });

    it('a bare findRegex (no slashes) is a pattern without flags', () => {
      expect(applyRegexScripts([script({ findRegex: 'x+' })], 'axxbx', stored).text).toBe('aybx');
    });
  });

  describe('substituteRegex: 0 as written, 1 macros substituted raw, 2 macros escaped', () => {
    it.each([
      [0, '/{{char}}/', 'Seraphina {{char}}', 'Seraphina y'],
      [1, '/{{char}}/', 'Seraphina {{char}}', 'y {{char}}'],
      [1, '/{{tag}}/g', 'a b c b|c', 'a y y y|y'],
      [2, '/{{tag}}/g', 'a b c b|c', 'a b c y'],
      [2, '/{{user}}/g', 'AxJx A.J.', 'AxJx y'],
      ['1', '/{{char}}/', 'Seraphina', 'y'], // ST reads Number(substituteRegex)
      [true, '/{{char}}/', 'Seraphina', 'y'], // legacy boolean true → 1
      [7, '/{{char}}/', 'Seraphina {{char}}', 'Seraphina y'], // unknown value → as written
    ] as [unknown, string, string, string][])(
      'substituteRegex %j: %s on %j → %j',
      (substituteRegex, findRegex, text, expected) => {
        const out = applyRegexScripts([script({ findRegex, substituteRegex, replaceString: 'y' })], text, {
          ...stored,
          substitute: macros,
        });
        expect(out.text).toBe(expected);
      },
    );

    it('sanitizeRegexMacro escapes what ST escapes', () => {
      expect(sanitizeRegexMacro('a.b*c\n/(x)|[y]{z}^$\\\t')).toBe(
        'a\\.b\\*c\\n\\/\\(x\\)\\|\\[y\\]\\{z\\}\\^\\$\\\\\\t',
      );
      expect(new RegExp(sanitizeRegexMacro('a.b*c\n/(x)|[y]{z}^$\\')).test('a.b*c\n/(x)|[y]{z}^$\\')).toBe(
        true,
      );
    });
  });

  describe('order: list order, global before preset before character', () => {
    it('each script runs on the previous output', () => {
      const rules = [
        script({ scriptName: 'one', findRegex: '/a/', replaceString: 'b' }),
        script({ scriptName: 'two', findRegex: '/b/', replaceString: 'c' }),
      ];
      const out = applyRegexScripts(rules, 'a', stored);
      expect(out.text).toBe('c');
      expect(out.appliedNames).toEqual(['one', 'two']);
    });

    it('scopes run global, preset, character whatever the input order', () => {
      const rules: ScopedRegexScript[] = [
        { scope: 'character', script: script({ scriptName: 'char', findRegex: '/$/', replaceString: 'C' }) },
        { scope: 'preset', script: script({ scriptName: 'preset', findRegex: '/$/', replaceString: 'P' }) },
        { scope: 'global', script: script({ scriptName: 'global', findRegex: '/$/', replaceString: 'G' }) },
        { scope: 'global', script: script({ scriptName: 'global2', findRegex: '/$/', replaceString: 'g' }) },
      ];
      const out = applyRegexScripts(rules, '>', stored);
      expect(out.text).toBe('>GgPC');
      expect(out.appliedNames).toEqual(['global', 'global2', 'preset', 'char']);
      expect(out.applied.map((a) => a.scope)).toEqual(['global', 'global', 'preset', 'character']);
    });

    it('an empty string is never matched, and a script that empties the text stops the rest (ST !rawString)', () => {
      expect(applyRegexScripts([script({ findRegex: '/^$/', replaceString: 'E' })], '', stored).text).toBe(
        '',
      );
      const rules = [
        script({ scriptName: 'wipe', findRegex: '/.*/', replaceString: '' }),
        script({ scriptName: 'fill', findRegex: '/^$/', replaceString: 'E' }),
      ];
      const out = applyRegexScripts(rules, 'abc', stored);
      expect(out.text).toBe('');
      expect(out.appliedNames).toEqual(['wipe']);
    });
  });

  it('reports applied rules with their match counts, not the ones that matched nothing', () => {
    const rules = [
      script({ id: 'r1', scriptName: 'hits', findRegex: '/o/g', replaceString: '0' }),
      script({ id: 'r2', scriptName: 'misses', findRegex: '/z/g', replaceString: '' }),
    ];
    const out = applyRegexScripts(rules, 'foo', stored);
    expect(out.applied).toEqual([{ id: 'r1', name: 'hits', scope: null, engine: 'linear', matches: 2 }]);
    expect(out.warnings).toEqual([]);
  });

  describe('scripts that cannot run are skipped with a warning, the others still apply', () => {
    it.each([
      ['/(/', 'regex_invalid'],
      ['/abc/x', 'regex_invalid'], // ST's regexFromString passes x, new RegExp rejects it
      ['/a{1001}/', 'regex_unsupported'],
    ])('%s → %s', (findRegex, code) => {
      const rules = [
        script({ scriptName: 'bad', findRegex }),
        script({ scriptName: 'good', findRegex: '/x/', replaceString: 'y' }),
      ];
      const out = applyRegexScripts(rules, 'x', stored);
      expect(out.text).toBe('y');
      expect(out.warnings).toEqual([expect.objectContaining({ code, script_name: 'bad' })]);
      expect(out.appliedNames).toEqual(['good']);
    });

    it('a catastrophic guarded pattern is abandoned with regex_guard_exceeded and leaves the text unchanged', () => {
      const text = 'a'.repeat(50_000) + '!';
      const rules = [script({ scriptName: 'evil', findRegex: '/(a+)+(?=b)$/', replaceString: '' })];
      const out = applyRegexScripts(rules, text, stored);
      expect(out.text).toBe(text);
      expect(out.warnings).toEqual([
        expect.objectContaining({ code: 'regex_guard_exceeded', script_name: 'evil' }),
      ]);
    });

    it('a throwing macro hook skips the script with a warning', () => {
      const out = applyRegexScripts([script({ substituteRegex: 1 })], 'x', {
        ...stored,
        substitute: () => {
          throw new Error('boom');
        },
      });
      expect(out.text).toBe('x');
      expect(out.warnings).toEqual([expect.objectContaining({ code: 'regex_unsupported' })]);
    });
  });

  it('runs the real fixture (lookahead → guarded engine) on AI output', () => {
    const fixture = JSON.parse(
      readFileSync(join(__dirname, '../../formats/__fixtures__/regex/StripOOCPreamble.regex.json'), 'utf8'),
    ) as Record<string, unknown>;
    // no g flag: only the first preamble block (and the whitespace after it) goes
    const out = applyRegexScripts([fixture], '  [OOC: planning]\n<think>x</think>  Hello there.', stored);
    expect(out.text).toBe('<think>x</think>  Hello there.');
    expect(applyRegexScripts([fixture], '<THINK>plan</THINK>\n\nHello.', stored).text).toBe('Hello.');
    expect(out.applied).toEqual([expect.objectContaining({ engine: 'guarded', matches: 1 })]);
    expect(applyRegexScripts([fixture], 'Hello [OOC: x] there.', stored).text).toBe('Hello [OOC: x] there.');
  });

  it('property: hostile or malformed scripts never throw and always return a string', () => {
    const anything = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer({ min: 0, max: 6 })),
    );
    const hostileScript = fc.record(
      {
        findRegex: fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.constantFrom('/(a+)+(?=b)$/', '/(/', '/(.*)*x/g', '/\\1(a)/', '/(?<=a)b/g', '/[/', '/x/yy'),
        ),
        replaceString: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('$1$99$<x>{{match}}')),
        trimStrings: fc.oneof(fc.array(fc.string({ maxLength: 3 })), anything),
        placement: fc.oneof(fc.array(fc.integer({ min: 0, max: 6 })), anything),
        disabled: anything,
        markdownOnly: anything,
        promptOnly: anything,
        substituteRegex: anything,
        minDepth: anything,
        maxDepth: anything,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.array(hostileScript, { maxLength: 4 }),
        fc.string({ maxLength: 200 }),
        fc.constantFrom<RegexRunContext['mode']>('stored', 'prompt', 'display'),
        fc.option(fc.integer({ min: -1, max: 10 }), { nil: undefined }),
        (scripts, text, mode, depth) => {
          const out = applyRegexScripts(scripts, text, { placement: 2, mode, depth, substitute: macros });
          expect(typeof out.text).toBe('string');
          expect(Array.isArray(out.warnings)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** The replacement as ST builds it, once per match (the pre-bounds implementation), as a reference. */
function stReplacement(
  replaceString: string,
  groups: (string | undefined)[],
  named: Record<string, string | undefined>,
  index: number,
  input: string,
  trimStrings: string[],
): string {
  const groupCount = groups.length - 1;
  const template = replaceString.replace(/{{match}}/gi, '$0');
  return template.replace(/\$(\d+)|\$<([^>]+)>/g, (_, num: string | undefined, name: string | undefined) => {
    let value: string | undefined;
    let trim = true;
    if (num) {
      const n = Number(num);
      if (n <= groupCount) value = groups[n];
      else if (n === groupCount + 1) {
        value = index === 0 ? undefined : String(index);
        trim = false;
      } else if (n === groupCount + 2) value = input;
    } else if (name) value = Object.prototype.hasOwnProperty.call(named, name) ? named[name] : undefined;
    if (!value) return '';
    if (!trim) return value;
    let filtered = value;
    for (const t of trimStrings) filtered = filtered.split(t).join('');
    return filtered;
  });
}

describe('bounds of one script run (REGEX_LIMITS, regex_limit)', () => {
  const rule = (fields: Record<string, unknown>) => script({ scriptName: 'big', placement: [2], ...fields });

  it('a script may produce exactly maxOutputChars; one more character skips it with regex_limit, text unchanged', () => {
    const replaceString = '{{match}}'.repeat(1_000);
    const atLimit = 'a'.repeat(REGEX_LIMITS.maxOutputChars / 1_000);
    const ok = applyRegexScripts([rule({ findRegex: '/./g', replaceString })], atLimit, stored);
    expect(ok.text).toHaveLength(REGEX_LIMITS.maxOutputChars);
    expect(ok.warnings).toEqual([]);
    const past = `${atLimit}a`;
    const out = applyRegexScripts(
      [
        rule({ findRegex: '/./g', replaceString }),
        script({ scriptName: 'next', findRegex: '/^a/', replaceString: 'b' }),
      ],
      past,
      stored,
    );
    expect(out.text).toBe(`b${past.slice(1)}`);
    expect(out.warnings).toEqual([expect.objectContaining({ code: 'regex_limit', script_name: 'big' })]);
    expect(out.appliedNames).toEqual(['next']);
  });

  it('$& repeated stays literal (as ST) and its output is bounded: 1,000 of them on every character of 200,000', () => {
    const text = 'a'.repeat(200_000);
    const out = applyRegexScripts(
      [rule({ findRegex: '/./g', replaceString: '$&'.repeat(1_000) })],
      text,
      stored,
    );
    expect(out.text).toBe(text);
    expect(out.warnings).toEqual([expect.objectContaining({ code: 'regex_limit' })]);
    expect(applyRegexScripts([rule({ findRegex: '/a/', replaceString: '$&$&' })], 'xa', stored).text).toBe(
      'x$&$&',
    );
  });

  it('$N past the groups (ST: the whole input per match) cannot make the output quadratic', () => {
    const text = 'a'.repeat(200_000);
    const out = applyRegexScripts([rule({ findRegex: '/(.)/g', replaceString: '$3' })], text, stored);
    expect(out.text).toBe(text);
    expect(out.warnings).toEqual([expect.objectContaining({ code: 'regex_limit' })]);
    expect(
      applyRegexScripts([rule({ findRegex: '/(b)/g', replaceString: '[$3]' })], 'abc', stored).text,
    ).toBe('a[abc]c');
  });

  it('trimming work is bounded: value length x (1 + trim strings) up to maxReplacementWork', () => {
    const trimStrings = Array.from({ length: 999 }, (_, i) => `<${i}>`);
    // One match, template `$3` (ST: the whole input, trimmed): 1 + length x 1,000 steps.
    const length = (REGEX_LIMITS.maxReplacementWork - 1) / 1_000;
    const atLimit = `a${'b'.repeat(length - 1)}`;
    const ok = applyRegexScripts(
      [rule({ findRegex: '/(a)/', replaceString: '$3', trimStrings })],
      atLimit,
      stored,
    );
    expect(ok.warnings).toEqual([]);
    expect(ok.text === atLimit + atLimit.slice(1)).toBe(true);
    const past = `${atLimit}b`;
    const out = applyRegexScripts(
      [rule({ findRegex: '/(a)/', replaceString: '$3', trimStrings })],
      past,
      stored,
    );
    expect(out.text === past).toBe(true);
    expect(out.warnings).toEqual([expect.objectContaining({ code: 'regex_limit' })]);
  });

  it('1,000 trim strings on a group of every character of 200,000 are trimmed once per distinct value', () => {
    const trimStrings = [...Array.from({ length: 999 }, (_, i) => `<${i}>`), 'a'];
    const text = 'ab'.repeat(100_000);
    const out = applyRegexScripts(
      [rule({ findRegex: '/(.)/g', replaceString: '$1', trimStrings })],
      text,
      stored,
    );
    expect(out.warnings).toEqual([]);
    expect(out.text).toBe('b'.repeat(100_000));
  });

  it('macro passes count against the budget; a replacement without macros gets none', () => {
    let calls = 0;
    const substitute = (text: string) => {
      calls++;
      return macros(text);
    };
    const text = 'a'.repeat(100_000);
    const plain = applyRegexScripts([rule({ findRegex: '/./g', replaceString: 'b' })], text, {
      ...stored,
      substitute,
    });
    expect(plain.text).toBe('b'.repeat(100_000));
    expect(calls).toBe(0);
    const out = applyRegexScripts([rule({ findRegex: '/./g', replaceString: '{{user}}' })], text, {
      ...stored,
      substitute,
    });
    expect(out.text).toBe(text);
    expect(out.warnings).toEqual([expect.objectContaining({ code: 'regex_limit' })]);
    // Each match: 8 literal characters + 1 part + one macro pass.
    expect(calls).toBe(Math.floor(REGEX_LIMITS.maxReplacementWork / (9 + REGEX_LIMITS.macroPassCost)) + 1);
    // Legacy tags, escaped braces and the v2 else marker still get their pass.
    calls = 0;
    for (const replaceString of ['<USER>', '\\{x', 'a}\\}', '\u0000']) {
      applyRegexScripts([rule({ findRegex: '/x/', replaceString })], 'x', { ...stored, substitute });
    }
    expect(calls).toBe(4);
  });

  it('property: replacements are what ST builds per match (template parsed once, trims memoised)', () => {
    const piece = fc.constantFrom(
      '$0',
      '$1',
      '$2',
      '$3',
      '$4',
      '$5',
      '$<n>',
      '$<m>',
      '$<',
      '>',
      '<',
      '$',
      '$12',
      'n',
      '{{match}}',
      '{{MATCH}}',
      '$$',
      '$&',
      'x',
      '-',
      'ab',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 8 }).map((parts) => parts.join('')),
        fc.array(fc.constantFrom('a', 'b', 'ab', '', 'z'), { maxLength: 3 }),
        fc.stringMatching(/^[abz ]{0,12}$/),
        fc.constantFrom('/(a)(?<n>b)?/g', '/(a+)/', '/b/g', '/(?<n>a)(b)/g', '/(z)?/g'),
        (replaceString, trimStrings, text, findRegex) => {
          const out = applyRegexScripts([rule({ findRegex, replaceString, trimStrings })], text, stored);
          const [, body, flags] = /^\/(.*)\/(\w*)$/.exec(findRegex) as RegExpExecArray;
          const expected = text.replace(new RegExp(body, flags), (...args: unknown[]) => {
            const hasNamed = typeof args[args.length - 1] === 'object';
            const named = (hasNamed ? args[args.length - 1] : {}) as Record<string, string | undefined>;
            const input = args[args.length - (hasNamed ? 2 : 1)] as string;
            const index = args[args.length - (hasNamed ? 3 : 2)] as number;
            const groups = args.slice(0, args.length - (hasNamed ? 3 : 2)) as (string | undefined)[];
            return stReplacement(replaceString, groups, named, index, input, trimStrings);
          });
          expect(out.text).toBe(text === '' ? '' : expected);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("a template with 100,000 `$<` and no `>` is read in one pass (V8 on ST's pattern: quadratic)", () => {
    const replaceString = '$<a'.repeat(100_000);
    const out = applyRegexScripts([rule({ findRegex: '/x/', replaceString })], 'x', stored);
    expect(out.text).toBe(replaceString);
  });
});

describe('per script object: the view the runtime reads and its compilation', () => {
  it('a script edited in place between runs is recompiled (the compilation is checked against its pattern)', () => {
    const rule = script({ findRegex: '/a/g', replaceString: '1' });
    expect(applyRegexScripts([rule], 'ab', stored).text).toBe('1b');
    rule.findRegex = '/b/g';
    expect(applyRegexScripts([rule], 'ab', stored).text).toBe('a1');
    rule.disabled = true;
    expect(applyRegexScripts([rule], 'ab', stored).text).toBe('ab');
  });

  it("property: gates and names are withRegexDefaults' (id made only when reported, the same id)", () => {
    const anything = fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.integer({ min: -1, max: 6 }),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(
        fc.record({
          id: anything,
          scriptName: anything,
          findRegex: fc.oneof(anything, fc.constantFrom('/a/g', 'a', '/(/')),
          replaceString: anything,
          placement: anything,
          disabled: anything,
          markdownOnly: anything,
          promptOnly: anything,
          runOnEdit: anything,
        }),
        fc.constantFrom<RegexRunContext['mode']>('stored', 'prompt', 'display'),
        fc.boolean(),
        (raw, mode, isEdit) => {
          const ctx: RegexRunContext = { placement: 2, mode, isEdit };
          const out = applyRegexScripts([raw], 'a', ctx);
          const full = withRegexDefaults(raw, 0);
          const modeOk =
            (full.markdownOnly && mode === 'display') ||
            (full.promptOnly && mode === 'prompt') ||
            (!full.markdownOnly && !full.promptOnly && mode === 'stored');
          const gate =
            modeOk &&
            !(isEdit && !full.runOnEdit) &&
            full.placement.includes(2) &&
            !full.disabled &&
            full.findRegex !== '';
          if (!gate) expect(out.warnings).toEqual([]);
          for (const named of [...out.applied, ...out.warnings]) {
            expect('id' in named ? named.id : named.script_id).toBe(full.id);
            expect('name' in named ? named.name : named.script_name).toBe(full.scriptName);
          }
          if (!gate) expect(out.applied).toEqual([]);
          if (gate && (full.findRegex === '/a/g' || full.findRegex === 'a'))
            expect(out.applied).toHaveLength(1);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('classifyRegexScripts agrees with the codec compat_report (reuse, not a copy)', () => {
  it('classifies each kind of script', () => {
    const scripts = [
      script({ scriptName: 'persist' }),
      script({ scriptName: 'prompt', promptOnly: true }),
      script({ scriptName: 'display', markdownOnly: true }),
      script({ scriptName: 'both', markdownOnly: true, promptOnly: true }),
      script({ scriptName: 'off', disabled: true }),
      script({ scriptName: 'lookahead', findRegex: '/a(?=b)/' }),
      script({ scriptName: 'too-big', findRegex: '/a{1001}/' }),
      script({ scriptName: 'display-placement', placement: [0] }),
      script({ scriptName: 'macro', findRegex: '/{{char}}/', substituteRegex: 1 }),
    ];
    const byName = Object.fromEntries(classifyRegexScripts(scripts).map((c) => [c.name, c]));
    expect(byName.persist).toMatchObject({ executes: 'persist', engine: 'linear', unsupported: false });
    expect(byName.prompt.executes).toBe('prompt');
    expect(byName.display.executes).toBe('display');
    expect(byName.both.executes).toBe('prompt');
    expect(byName.off).toMatchObject({ executes: null, disabled: true });
    expect(byName.lookahead).toMatchObject({ executes: 'persist', engine: 'guarded' });
    expect(byName['too-big']).toMatchObject({
      executes: null,
      unsupported: true,
      unsupported_reason: expect.stringContaining('repeat'),
    });
    expect(byName['display-placement']).toMatchObject({
      unsupported: true,
      unsupported_reason: 'no runtime placement',
    });
    expect(byName.macro).toMatchObject({ executes: 'persist', engine: null });
    const report = compatReport(scripts);
    expect(report.unsupported_runtime_count).toBe(2);
  });

  it('property: counting the classification gives the compat_report numbers', () => {
    const arbitraryScript = fc.record({
      findRegex: fc.constantFrom('', '/x/', 'x', '/a(?=b)/', '/a{1001}/', '/(/', '/{{char}}/'),
      placement: fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }),
      disabled: fc.boolean(),
      markdownOnly: fc.boolean(),
      promptOnly: fc.boolean(),
      substituteRegex: fc.constantFrom(0, 1, 2),
    });
    fc.assert(
      fc.property(fc.array(arbitraryScript, { maxLength: 8 }), (scripts) => {
        const classes = classifyRegexScripts(scripts);
        const report = compatReport(scripts);
        expect(classes.filter((c) => c.executes === 'prompt')).toHaveLength(report.prompt_executable_count);
        expect(classes.filter((c) => c.executes === 'persist')).toHaveLength(report.persist_executable_count);
        expect(classes.filter((c) => c.executes === 'display')).toHaveLength(report.display_only_count);
        expect(classes.filter((c) => c.unsupported)).toHaveLength(report.unsupported_runtime_count);
      }),
      { numRuns: 200 },
    );
  });
});

describe('compile bounds: one pattern (USER_REGEX_LIMITS) and one run (REGEX_LIMITS.maxCompileWork)', () => {
  const unique = (() => {
    let n = 0;
    return (length: number) => {
      const tag = `U${process.pid}_${n++}_`;
      return tag + 'abcdefghij'.repeat(Math.ceil(length / 10)).slice(0, length - tag.length);
    };
  })();
  const prompt: RegexRunContext = { placement: 2, mode: 'prompt' };
  const rule = (name: string, source: string, fields: Record<string, unknown> = {}) =>
    script({ scriptName: name, findRegex: `/${source}/g`, replaceString: '!', promptOnly: true, ...fields });

  it('a findRegex over maxSourceLength is skipped with regex_unsupported; at the limit it runs', () => {
    const at = unique(USER_REGEX_LIMITS.maxSourceLength);
    const out = applyRegexScripts([rule('at', at), rule('past', `${at}x`)], `${at}x`, prompt);
    expect(out.text).toBe('!x');
    expect(out.warnings).toEqual([
      expect.objectContaining({ code: 'regex_unsupported', script_name: 'past' }),
    ]);
  });

  it('a script that cannot compile is warned about once per run, not once per string', () => {
    const scripts = [rule('long', unique(USER_REGEX_LIMITS.maxSourceLength + 1)), rule('bad', '(')];
    const codes = (text: string, list = scripts) =>
      applyRegexScripts(list, text, prompt).warnings.map((w) => [w.code, w.script_name]);
    expect(codes('one')).toEqual([
      ['regex_unsupported', 'long'],
      ['regex_invalid', 'bad'],
    ]);
    expect(codes('two')).toEqual([]);
    expect(codes('three', [...scripts])).toHaveLength(2); // a new run warns again
  });

  it('the pattern after macro substitution is bounded too (substituteRegex 1 and 2)', () => {
    const long = unique(USER_REGEX_LIMITS.maxSourceLength);
    for (const substituteRegex of [1, 2]) {
      const out = applyRegexScripts([rule('sub', 'a{{big}}', { substituteRegex })], 'abc', {
        ...prompt,
        substitute: (text) => text.replace('{{big}}', long),
      });
      expect(out.text).toBe('abc');
      expect(out.warnings).toEqual([
        expect.objectContaining({ code: 'regex_unsupported', script_name: 'sub' }),
      ]);
    }
  });

  it('past the budget each further script to compile is skipped with one regex_limit per run; compiled ones run', () => {
    const sources = [unique(40), unique(40), unique(40), unique(40)];
    const scripts = sources.map((s, i) => rule(`s${i}`, s));
    const budget = newRegexCompileBudget(100);
    const text = sources.join(' ');
    const first = applyRegexScripts(scripts, text, { ...prompt, compileBudget: budget });
    expect(first.appliedNames).toEqual(['s0', 's1']);
    expect(first.warnings.map((w) => [w.code, w.script_name])).toEqual([
      ['regex_limit', 's2'],
      ['regex_limit', 's3'],
    ]);
    expect(budget.remaining).toBe(20);
    // Same budget, another string: the refused scripts are skipped without a second warning, compiled ones
    // run (and cost nothing again).
    const second = applyRegexScripts(scripts, text, { ...prompt, compileBudget: budget });
    expect(second.appliedNames).toEqual(['s0', 's1']);
    expect(second.warnings).toEqual([]);
    expect(budget.remaining).toBe(20);
    // A new budget (the next turn): compiled patterns are cached, so only the other two are charged.
    const next = newRegexCompileBudget(100);
    const third = applyRegexScripts(scripts, text, { ...prompt, compileBudget: next });
    expect(third.appliedNames).toEqual(['s0', 's1', 's2', 's3']);
    expect(next.remaining).toBe(20);
  });

  it('without a budget given, one budget per scripts array (build-prompt passes one array per turn)', () => {
    const size = Math.floor(REGEX_LIMITS.maxCompileWork / USER_REGEX_LIMITS.maxSourceLength);
    const scripts = Array.from({ length: size + 2 }, (_, i) =>
      rule(`s${i}`, unique(USER_REGEX_LIMITS.maxSourceLength)),
    );
    const first = applyRegexScripts(scripts, 'text', prompt);
    expect(first.warnings.map((w) => [w.code, w.script_name])).toEqual([
      ['regex_limit', `s${size}`],
      ['regex_limit', `s${size + 1}`],
    ]);
    expect(applyRegexScripts(scripts, 'more text', prompt).warnings).toEqual([]);
    // A new array is a new run: the two left out compile now.
    expect(applyRegexScripts([...scripts], 'text', prompt).warnings).toEqual([]);
  });

  it('counted repeats are charged expanded', () => {
    const budget = newRegexCompileBudget(3_000);
    const out = applyRegexScripts(
      [
        rule('r1', `${unique(20)}a{1000}`),
        rule('r2', `${unique(20)}a{1000}`),
        rule('r3', `${unique(20)}a{1000}`),
      ],
      'x',
      { ...prompt, compileBudget: budget },
    );
    expect(out.warnings.map((w) => [w.code, w.script_name])).toEqual([['regex_limit', 'r3']]);
  });
});
