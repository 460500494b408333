import {
  expectFieldEquivalent,
  expectParseError,
  fixtureFiles,
  readJsonFixture,
} from './format.test-support';
import {
  checkRegexImportScripts,
  compatReport,
  compileFindRegex,
  exportRegexScripts,
  parseRegexScripts,
  REGEX_IMPORT_MAX_PATTERN_UNITS,
  REGEX_IMPORT_MAX_SCRIPTS,
} from './regex-scripts';
import { REGEX_LIMITS } from '../prompt/regex/regex-runtime';
import { USER_REGEX_LIMITS } from '../prompt/regex/user-regex';

const FILES = fixtureFiles('regex');

const script = (fields: Record<string, unknown>) => ({ findRegex: '/x/g', placement: [2], ...fields });

describe('regex-scripts', () => {
  it('has the regex fixture', () => {
    expect(FILES).toHaveLength(1);
  });

  it.each(FILES)('%s round-trips to an equivalent script, field by field', (file) => {
    const original = readJsonFixture('regex', file);
    const parsed = parseRegexScripts(original);
    expect(parsed).toHaveLength(1);
    const exported = exportRegexScripts(parsed);
    expect(exported).toHaveLength(1);
    expectFieldEquivalent(exported[0], original);
    expectFieldEquivalent(exportRegexScripts(parseRegexScripts(exported)), [original]);
  });

  it('reports the fixture in compat_report', () => {
    expect(compatReport(parseRegexScripts(readJsonFixture('regex', FILES[0])))).toEqual({
      stored_count: 1,
      prompt_executable_count: 0,
      persist_executable_count: 1,
      display_only_count: 0,
      unsupported_runtime_count: 0,
      contains_prompt_only: false,
      contains_run_on_edit: true,
      contains_reasoning: false,
      contains_slash_command: false,
    });
  });

  it('fills safe defaults for missing legacy fields and keeps unknown ones', () => {
    const [legacy] = parseRegexScripts([
      {
        scriptName: 'Old',
        findRegex: 'foo',
        replaceString: 'bar {{char}}',
        placement: 1,
        substituteRegex: true,
        legacyField: 'kept',
      },
    ]);
    const [out] = exportRegexScripts([legacy]);
    expect(out).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/),
      scriptName: 'Old',
      findRegex: 'foo',
      replaceString: 'bar {{char}}',
      trimStrings: [],
      placement: [1],
      disabled: false,
      markdownOnly: false,
      promptOnly: false,
      runOnEdit: false,
      substituteRegex: 1,
      minDepth: null,
      maxDepth: null,
      legacyField: 'kept',
    });
    expect(exportRegexScripts([legacy])[0].id).toBe(out.id); // stable across exports
    const [empty] = exportRegexScripts([{}]);
    expect(empty).toMatchObject({
      scriptName: '',
      findRegex: '',
      replaceString: '',
      placement: [],
      substituteRegex: 0,
    });
  });

  it('compiles /pattern/flags and bare patterns as ST does', () => {
    expect(compileFindRegex('/a+b/gi')?.flags).toBe('gi');
    expect(compileFindRegex('a+b')?.source).toBe('a+b');
    expect(compileFindRegex('/(unclosed/')).toBeNull();
  });

  it('counts a mixed set in compat_report', () => {
    const scripts = parseRegexScripts([
      script({ promptOnly: true }),
      script({ promptOnly: true, markdownOnly: true, placement: [6] }),
      script({ markdownOnly: true, placement: [1] }),
      script({}),
      script({ disabled: true }),
      script({ placement: [3] }),
      script({ findRegex: '' }),
      script({ placement: [0], runOnEdit: true }),
    ]);
    expect(compatReport(scripts)).toEqual({
      stored_count: 8,
      prompt_executable_count: 2,
      persist_executable_count: 1,
      display_only_count: 1,
      unsupported_runtime_count: 3,
      contains_prompt_only: true,
      contains_run_on_edit: true,
      contains_reasoning: true,
      contains_slash_command: true,
    });
    expect(compatReport([]).stored_count).toBe(0);
  });

  it('rejects malformed scripts with import_parse_error', () => {
    expectParseError(() => parseRegexScripts('x'), /script object or an array/);
    expectParseError(() => parseRegexScripts([1]), /scripts\[0\] must be an object/);
    expectParseError(
      () => parseRegexScripts([{ findRegex: '/(oops/g' }]),
      /scripts\[0\]\.findRegex does not compile/,
    );
    const named = expectParseError(
      () => parseRegexScripts([{ scriptName: 'Fine' }, { scriptName: 'Broken one', findRegex: '(' }]),
      /scripts\[1\]\.findRegex does not compile: \( \(script "Broken one"\)/,
    );
    expect(named.details).toEqual({ field: 'scripts[1].findRegex', script_name: 'Broken one' });
    expectParseError(() => parseRegexScripts([{ findRegex: 5 }]), /findRegex must be a string/);
    expectParseError(() => parseRegexScripts([{ disabled: 'no' }]), /disabled must be a boolean/);
    expectParseError(
      () => parseRegexScripts([{ placement: ['2'] }]),
      /placement must be an array of integers/,
    );
    expectParseError(
      () => parseRegexScripts([{ trimStrings: 'x' }]),
      /trimStrings must be an array of strings/,
    );
    expectParseError(() => parseRegexScripts([{ minDepth: '3' }]), /minDepth must be a number or null/);
  });

  it('does not compile-check a findRegex that macros are substituted into', () => {
    expect(parseRegexScripts([{ findRegex: '/({{char}}/', substituteRegex: 1 }])).toHaveLength(1);
  });

  it(`imports at most ${REGEX_IMPORT_MAX_SCRIPTS} scripts`, () => {
    const scripts = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ findRegex: `/a${i}/g`, placement: [2] }));
    expect(() => checkRegexImportScripts(scripts(REGEX_IMPORT_MAX_SCRIPTS))).not.toThrow();
    expect(() => checkRegexImportScripts({ findRegex: '/a/' })).not.toThrow();
    const parsed = parseRegexScripts(scripts(REGEX_IMPORT_MAX_SCRIPTS));
    expect(compatReport(parsed)).toMatchObject({
      stored_count: REGEX_IMPORT_MAX_SCRIPTS,
      persist_executable_count: REGEX_IMPORT_MAX_SCRIPTS,
      unsupported_runtime_count: 0,
    });
    const error = expectParseError(
      () => checkRegexImportScripts(scripts(REGEX_IMPORT_MAX_SCRIPTS + 1)),
      /has 10001 scripts; at most 10000/,
    );
    expect(error.details).toEqual({ field: 'data', max_scripts: REGEX_IMPORT_MAX_SCRIPTS });
  });

  describe(`patterns total at most ${REGEX_IMPORT_MAX_PATTERN_UNITS} units (length, counted repeats expanded)`, () => {
    // `/` + pattern + `/g`: each findRegex is exactly `length` characters; unique so nothing is cached.
    const pattern = (i: number, length: number) => {
      const tag = `P${process.pid}_${i}_`;
      return `/${tag}${'abcdefghij'.repeat(length / 10).slice(0, length - 3 - tag.length)}/g`;
    };
    const scripts = (n: number, length: number) =>
      Array.from({ length: n }, (_, i) => ({
        findRegex: pattern(i, length),
        placement: [2],
        promptOnly: true,
      }));

    it('equals one turn of compile budget, so an imported profile compiles within a turn', () => {
      expect(REGEX_IMPORT_MAX_PATTERN_UNITS).toBe(REGEX_LIMITS.maxCompileWork);
    });

    it('at the limit the file imports and every script is supported; one character more is refused', () => {
      const count = REGEX_IMPORT_MAX_PATTERN_UNITS / USER_REGEX_LIMITS.maxSourceLength;
      const at = scripts(count, USER_REGEX_LIMITS.maxSourceLength);
      expect(() => checkRegexImportScripts(at)).not.toThrow();
      expect(compatReport(parseRegexScripts(at))).toMatchObject({
        stored_count: count,
        prompt_executable_count: count,
        unsupported_runtime_count: 0,
      });
      const past = [...at, { findRegex: 'a', placement: [2] }];
      const error = expectParseError(() => checkRegexImportScripts(past), /findRegex patterns are too large/);
      expect(error.details).toEqual({ field: 'data', max_pattern_units: REGEX_IMPORT_MAX_PATTERN_UNITS });
    });

    it('patterns over the length limit count their length (refused before the syntax check reads them)', () => {
      const long = (n: number) => scripts(n, USER_REGEX_LIMITS.maxSourceLength + 4);
      const count = Math.floor(REGEX_IMPORT_MAX_PATTERN_UNITS / (USER_REGEX_LIMITS.maxSourceLength + 4));
      expect(() => checkRegexImportScripts(long(count))).not.toThrow();
      expect(compatReport(parseRegexScripts(long(1)))).toMatchObject({ unsupported_runtime_count: 1 });
      expectParseError(() => checkRegexImportScripts(long(count + 1)));
      // 10 MiB of such patterns (20 s to judge before the bounds) is refused at once.
      expectParseError(() => checkRegexImportScripts(long(2_000)));
    });

    it('short patterns count their expanded repeats; macros-substituted ones count too', () => {
      const repeats = (n: number, substituteRegex = 0) =>
        Array.from({ length: n }, (_, i) => ({
          findRegex: `/x${i}${'a{1000}'.repeat(9)}/g`,
          substituteRegex,
        }));
      expect(() => checkRegexImportScripts(repeats(11))).not.toThrow(); // 11 x 9,000+ units
      expectParseError(() => checkRegexImportScripts(repeats(12)));
      expectParseError(() => checkRegexImportScripts(repeats(12, 1)));
      // A pattern over the program limit is refused after its syntax check: it counts its length.
      expect(() => checkRegexImportScripts({ findRegex: `/${'(?:a{1000})'.repeat(101)}/` })).not.toThrow();
      // One script object (not an array) is counted too.
      expectParseError(
        () => checkRegexImportScripts({ findRegex: 'a'.repeat(REGEX_IMPORT_MAX_PATTERN_UNITS + 1) }),
        /too large/,
      );
    });
  });
});
