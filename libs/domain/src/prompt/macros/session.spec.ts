import fc from 'fast-check';
import { baseContext } from './macro-fixtures';
import { expandMacros, MacroSession } from './session';
import type { MacroEngineKind } from './types';

const ENGINES: MacroEngineKind[] = ['v2', 'classic'];

const PIECES = [
  '{{',
  '}}',
  '{',
  '}',
  '::',
  ':',
  '.',
  '$',
  '/',
  '#',
  '!',
  '|',
  '\\',
  '\n',
  ' ',
  'x',
  '1',
  'user',
  'char',
  'if',
  'else',
  '/if',
  'setvar',
  'getvar::x',
  'incvar::n',
  '.x',
  '$g',
  '++',
  '=',
  '||',
  'random::a::b',
  'pick::a::b',
  'roll:2d6',
  'reverse:',
  'trim',
  '//',
  'time_UTC+2',
  'datetimeformat::',
  'timeDiff::',
  '<USER>',
  'description',
];

const macroish = fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }).map((parts) => parts.join(''));

describe('macro session: properties (issue 4 "Bad input", "seeded generator")', () => {
  it('same seed ⇒ same output and same diagnostics, for both engines', () => {
    fc.assert(
      fc.property(macroish, fc.string(), fc.constantFrom(...ENGINES), (text, seed, engine) => {
        const a = expandMacros(text, baseContext({ seed, engine }));
        const b = expandMacros(text, baseContext({ seed, engine }));
        expect(b).toEqual(a);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on malformed or nested macros; results are JSON-serialisable', () => {
    fc.assert(
      fc.property(
        fc.oneof(macroish, fc.string({ unit: 'grapheme' })),
        fc.constantFrom(...ENGINES),
        (text, engine) => {
          const result = expandMacros(text, baseContext({ engine }));
          expect(typeof result.text).toBe('string');
          expect(JSON.parse(JSON.stringify(result))).toEqual(result);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('text without braces or angle tags passes through unchanged', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/[{}<\\]/.test(s)),
        fc.constantFrom(...ENGINES),
        (text, engine) => {
          expect(expandMacros(text, baseContext({ engine })).text).toBe(text);
        },
      ),
    );
  });

  it('{{random}} results are reproducible from the seed and vary across seeds', () => {
    const text = '{{random::a::b::c::d::e::f}}{{random::a::b::c::d::e::f}}{{roll:1d100}}';
    const outputs = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const seed = `seed-${i}`;
      const first = expandMacros(text, baseContext({ seed })).text;
      expect(expandMacros(text, baseContext({ seed })).text).toBe(first);
      outputs.add(first);
    }
    expect(outputs.size).toBeGreaterThan(1);
  });

  it('hostile inputs finish and stay bounded', () => {
    const inputs = [
      '{{'.repeat(20_000),
      '{{a::'.repeat(5_000),
      '{{if .x}}'.repeat(2_000),
      '{{timeDiff::'.repeat(3_000) + '::',
      '{{.a={{.a}}{{.a}}}}'.repeat(40),
      '{{setvar::a::x}}' + '{{addvar::a::{{getvar::a}}}}'.repeat(60),
      '\n'.repeat(100_000) + '{{',
      '\n'.repeat(100_000) + 'x{{trim}}',
      '\r\n'.repeat(50_000) + '{{trim}}' + '\n'.repeat(50_000),
      '{{reverse:'.repeat(5_000),
      '{{// '.repeat(5_000),
    ];
    for (const engine of ENGINES) {
      for (const text of inputs) {
        const result = expandMacros(text, baseContext({ engine, variables: { local: { a: 'xx' } } }));
        expect(result.text.length).toBeLessThanOrEqual(5_000_000 + text.length);
        if (text.endsWith('x{{trim}}')) expect(result.text).toBe('\n'.repeat(100_000) + 'x');
        if (text.startsWith('\r\n')) expect(result.text).toBe('');
      }
    }
  });

  it('a staged value over the length cap is refused with macro_limit; output over the cap is truncated', () => {
    const big = 'x'.repeat(600_000);
    const refused = expandMacros(
      '{{addvar::v::{{getvar::v}}}}{{getvar::v}}',
      baseContext({ variables: { local: { v: big } } }),
    );
    expect(refused.text).toBe(big);
    expect(refused.staged_mutations).toEqual([]);
    expect(refused.warnings.map((w) => w.code)).toContain('macro_limit');
    const truncated = expandMacros(
      '{{getvar::v}}'.repeat(10),
      baseContext({ variables: { local: { v: big } } }),
    );
    expect(truncated.text.length).toBe(5_000_000);
    expect(truncated.warnings.map((w) => w.code)).toContain('macro_limit');
  });

  it('a failing value source becomes macro_internal_error and the macro stays as written', () => {
    const character = {};
    Object.defineProperty(character, 'description', {
      get() {
        throw new Error('broken card');
      },
    });
    for (const engine of ENGINES) {
      const result = expandMacros('A {{description}} B {{user}}', baseContext({ engine, character }));
      expect(result.warnings.map((w) => w.code)).toContain('macro_internal_error');
      expect(result.text).toBe('A {{description}} B Alice');
    }
  });

  it('a malformed context never throws', () => {
    expect(() => new MacroSession(null as never).expand('{{user}} {{time}}')).not.toThrow();
    expect(new MacroSession({ now: NaN, seed: 'x', timezone: 'Nope/Zone' }).expand('{{isodate}}')).toBe(
      '1970-01-01',
    );
    expect(new MacroSession(baseContext()).expand(undefined as never)).toBe('');
  });
});

describe('macro session: diagnostics (runtime_trace.macro)', () => {
  it('reports used names in first-seen order, de-duplicated warnings and per-text traces', () => {
    const session = new MacroSession(baseContext());
    session.expand('{{user}} {{foo}} {{foo}} {{setvar::a::1}}', { source: 'main' });
    session.expand('{{getvar::a}} {{User}}', { source: 'nsfw' });
    const d = session.diagnostics();
    expect(d.used_names).toEqual(['user', 'foo', 'setvar', 'getvar']);
    expect(d.warnings).toEqual([
      { code: 'macro_unknown', message: 'Unknown macro "foo" left as text.', macro: 'foo', source: 'main' },
    ]);
    expect(d.traces).toEqual([
      {
        source: 'main',
        engine: 'v2',
        input_length: 41,
        output_length: 22,
        used_names: ['user', 'foo', 'setvar'],
        mutation_count: 1,
      },
      {
        source: 'nsfw',
        engine: 'v2',
        input_length: 22,
        output_length: 7,
        used_names: ['getvar', 'user'],
        mutation_count: 0,
      },
    ]);
    expect(d.mutation_preview).toEqual({ local: { a: '1' }, global: {}, deleted: { local: [], global: [] } });
  });

  it('object values in staged mutations and the preview are stable JSON strings', () => {
    const result = expandMacros(
      '{{setvar::obj.z::1}}',
      baseContext({ variables: { local: { obj: { b: 1, a: { d: 1, c: 2 } } } } }),
    );
    expect(result.staged_mutations[0].before).toBe('{"a":{"c":2,"d":1},"b":1}');
    expect(result.mutation_preview.local.obj).toBe('{"a":{"c":2,"d":1},"b":1,"z":"1"}');
  });

  it('variablesAfter applies the staged writes without touching the input views', () => {
    const views = { local: { n: 1 }, global: {} };
    const session = new MacroSession(baseContext({ variables: views }));
    session.expand('{{incvar::n}}{{setglobalvar::g::x}}');
    expect(session.variablesAfter('local')).toEqual({ n: 2 });
    expect(session.variablesAfter('global')).toEqual({ g: 'x' });
    expect(views).toEqual({ local: { n: 1 }, global: {} });
  });

  it('cardField gives the assembly the same once-expanded value the card macros see', () => {
    const session = new MacroSession(
      baseContext({ character: { description: ' {{incvar::n}} {{char}} ', personality: '' } }),
    );
    expect(session.cardField('description')).toBe('1 Seraphina');
    expect(session.expand('{{description}}')).toBe('1 Seraphina');
    expect(session.cardField('personality')).toBe('');
    expect(session.cardField('persona')).toBe('A traveler called Alice.');
    expect(session.diagnostics().staged_mutations).toHaveLength(1);
  });

  it('engine defaults to v2 and can be chosen per session or per text', () => {
    expect(new MacroSession(baseContext({ engine: undefined })).engine).toBe('v2');
    expect(new MacroSession(baseContext({ engine: 'classic' })).engine).toBe('classic');
    const session = new MacroSession(baseContext({ engine: 'classic' }));
    expect(session.expand('{{.x}}')).toBe('{{.x}}');
    expect(session.expand('{{.x}}', { engine: 'v2' })).toBe('4');
  });
});

describe('escapeValue (ST postProcessFn): each substituted macro value, never the text around it', () => {
  const escape = (value: string) => value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  it.each(['v2', 'classic'] as const)('%s', (engine) => {
    const context = baseContext({ engine, user: 'A.J.' });
    expect(expandMacros('^{{user}}.x$', context, { escapeValue: escape }).text).toBe('^A\\.J\\..x$');
    expect(expandMacros('{{user}}', context).text).toBe('A.J.');
  });
  it("v2: as ST's #resolveMacro, every known macro's value, nested ones too; not unknown macros nor shorthands", () => {
    const context = baseContext({
      engine: 'v2',
      user: 'A.J.',
      variables: { local: { v: 'a.b' }, global: {} },
    });
    const run = (text: string) => expandMacros(text, context, { escapeValue: escape }).text;
    // {{user}} → A\.J\. ; reversed → .\J.\A ; escaped again.
    expect(run('{{reverse::{{user}}}}')).toBe('\\.\\\\J\\.\\\\A');
    expect(run('{{.v}}|{{foo::a.b}}')).toBe('a.b|{{foo::a.b}}');
  });
});
