import { book, msgs, run, stEntry, uids } from './lorebook.test-support';
import fc from 'fast-check';
import { compileKey, Haystack, keyMatches, regexPrefilter, wholeWordIndex } from './matcher';

describe('lorebook key matching (external-formats.md §d.3)', () => {
  const matchTable: Array<
    [string, string, string, { caseSensitive: boolean; matchWholeWords: boolean }, boolean]
  > = [
    [
      '§d.3 plain key is a substring test',
      'dragon',
      'the dragonfly',
      { caseSensitive: false, matchWholeWords: false },
      true,
    ],
    [
      '§d.3 plain key is case-insensitive by default',
      'Dragon',
      'a DRAGON here',
      { caseSensitive: false, matchWholeWords: false },
      true,
    ],
    [
      '§d.3 case-sensitive plain key',
      'Dragon',
      'a dragon here',
      { caseSensitive: true, matchWholeWords: false },
      false,
    ],
    [
      '§d.3 case-sensitive exact case',
      'Dragon',
      'a Dragon here',
      { caseSensitive: true, matchWholeWords: false },
      true,
    ],
    [
      '§d.3 whole words: a word inside a longer word does not match',
      'cat',
      'category',
      { caseSensitive: false, matchWholeWords: true },
      false,
    ],
    [
      '§d.3 whole words: punctuation is a boundary',
      'cat',
      'a cat.',
      { caseSensitive: false, matchWholeWords: true },
      true,
    ],
    [
      '§d.3 whole words: start and end of text are boundaries',
      'cat',
      'cat',
      { caseSensitive: false, matchWholeWords: true },
      true,
    ],
    [
      '§d.3 whole words: underscore is a word character (JS \\w)',
      'cat',
      'my_cat',
      { caseSensitive: false, matchWholeWords: true },
      false,
    ],
    [
      '§d.3 whole words: JS \\W makes non-ASCII letters boundaries',
      'caf',
      'café',
      { caseSensitive: false, matchWholeWords: true },
      true,
    ],
    [
      '§d.3 whole words: a later occurrence can match',
      'cat',
      'cats and a cat',
      { caseSensitive: false, matchWholeWords: true },
      true,
    ],
    [
      '§d.3 whole words: a key with whitespace is a substring test',
      'red fox',
      'the red foxes',
      { caseSensitive: false, matchWholeWords: true },
      true,
    ],
    [
      '§d.3 regex key runs on the raw text with its flags',
      '/dra+gon/i',
      'a DRAAAGON',
      { caseSensitive: false, matchWholeWords: true },
      true,
    ],
    [
      '§d.3 regex key ignores the case setting (no i flag = case-sensitive)',
      '/dragon/',
      'a DRAGON',
      { caseSensitive: false, matchWholeWords: false },
      false,
    ],
    [
      '§d.3 regex key ignores whole words',
      '/cat/',
      'category',
      { caseSensitive: false, matchWholeWords: true },
      true,
    ],
    [
      '§d.3 an unescaped slash in the body makes it a plain key',
      '/a/b/',
      'x /a/b/ y',
      { caseSensitive: false, matchWholeWords: false },
      true,
    ],
    [
      '§d.3 an invalid pattern is matched as plain text',
      '/(/',
      'see /(/ here',
      { caseSensitive: false, matchWholeWords: false },
      true,
    ],
  ];
  it.each(matchTable)('%s', (_name, key, text, options, expected) => {
    expect(keyMatches(compileKey(key), new Haystack(text), options)).toBe(expected);
  });

  it('§d.3 wholeWordIndex finds the first bounded occurrence', () => {
    expect(wholeWordIndex('cats cat', 'cat')).toBe(5);
    expect(wholeWordIndex('cats', 'cat')).toBe(-1);
  });

  it('§d.3 a regex key is compiled once and its invalid form warns', () => {
    const invalid = compileKey('/(/');
    expect(invalid.kind).toBe('plain');
    expect(invalid.warning?.code).toBe('invalid_key_regex');
    expect(compileKey('/a(?=b)/').kind).toBe('regex');
  });

  it('§d.3 a catastrophic regex key never stalls the scan', () => {
    const text = `${'a'.repeat(50_000)}!`;
    const r = run({
      books: [book('b', [stEntry(1, { key: ['/(a+)+$/'] }), stEntry(2, { key: ['aaa'] })])],
      messages: msgs(text),
    });
    expect(uids(r)).toEqual([2]);
  });

  it('§d.3 a pattern our engines refuse never matches and warns (unsupported_key_regex)', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['/a{1001}/'] })])],
      messages: msgs('a'.repeat(1200)),
    });
    expect(uids(r)).toEqual([]);
    expect(r.warnings).toEqual([
      expect.objectContaining({ code: 'unsupported_key_regex', bookId: 'b', uid: 1 }),
    ]);
  });

  it('§d.3 a guarded pattern that runs out of steps is a non-match with a warning (key_regex_aborted)', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['/(a+)+(?=b)/'] }), stEntry(2, { key: ['aaaa'] })])],
      messages: msgs('a'.repeat(50_000)),
    });
    expect(uids(r)).toEqual([2]);
    expect(r.warnings).toEqual([expect.objectContaining({ code: 'key_regex_aborted', uid: 1 })]);
  });

  it('§d.3 an invalid regex key becomes a warning, never a throw', () => {
    const r = run({ books: [book('b', [stEntry(1, { key: ['/[/'] })])], messages: msgs('x [/ y') });
    expect(r.warnings.map((w) => w.code)).toContain('invalid_key_regex');
    expect(uids(r)).toEqual([]);
  });

  it('§d.3 macros in keys are substituted and trimmed before matching', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['{{char}}'] }), stEntry(2, { key: [' {{user}} '] })])],
      messages: msgs('Seraphina waves at Bob'),
      substitute: (t) => t.replace('{{char}}', 'Seraphina').replace('{{user}}', 'Bob'),
    });
    expect(uids(r)).toEqual([1, 2]);
  });

  it('§d.3 a key that substitutes to empty never matches', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['{{empty}}', ''] })])],
      messages: msgs('anything'),
      substitute: (t) => t.replace('{{empty}}', '   '),
    });
    expect(uids(r)).toEqual([]);
  });

  it('book defaults (spec 3 payload) sit between the entry value and the session settings', () => {
    const entries = [
      stEntry(1, { key: ['Dragon'] }),
      stEntry(2, { key: ['Dragon'], caseSensitive: false }),
      stEntry(3, { key: ['drag'] }),
      stEntry(4, { key: ['old'] }),
      stEntry(5, { key: ['old'], scanDepth: 2 }),
    ];
    const r = run({
      books: [
        { ...book('b', entries), defaults: { caseSensitive: true, matchWholeWords: false, scanDepth: 1 } },
      ],
      messages: msgs('old', 'a dragon'),
      settings: { caseSensitive: false, matchWholeWords: true, scanDepth: 5 },
    });
    expect(uids(r).sort()).toEqual([2, 3, 5]);
  });

  it('§c entry caseSensitive / matchWholeWords win over the global settings', () => {
    const r = run({
      books: [
        book('b', [
          stEntry(1, { key: ['Dragon'], caseSensitive: true }),
          stEntry(2, { key: ['drag'], matchWholeWords: true }),
          stEntry(3, { key: ['drag'], matchWholeWords: false }),
        ]),
      ],
      messages: msgs('a dragon'),
      settings: { caseSensitive: false, matchWholeWords: true },
    });
    expect(uids(r)).toEqual([3]);
  });
});

describe('lorebook scan buffer (external-formats.md §d.2)', () => {
  const entries = [
    stEntry(1, { key: ['apple'] }),
    stEntry(2, { key: ['pear'] }),
    stEntry(3, { key: ['plum'] }),
  ];

  it('§d.2 only the N newest messages are scanned (global depth)', () => {
    const r = run({
      books: [book('b', entries)],
      messages: msgs('apple', 'pear', 'plum'),
      settings: { scanDepth: 2 },
    });
    expect(uids(r).sort()).toEqual([2, 3]);
  });

  it('§d.2 entry scanDepth wins over the global depth', () => {
    const deep = [stEntry(1, { key: ['apple'], scanDepth: 3 }), ...entries.slice(1)];
    const r = run({
      books: [book('b', deep)],
      messages: msgs('apple', 'pear', 'plum'),
      settings: { scanDepth: 1 },
    });
    expect(uids(r).sort()).toEqual([1, 3]);
  });

  it('§d.2 depth 0 scans nothing: only constants fire', () => {
    const r = run({
      books: [book('b', [...entries, stEntry(9, { constant: true })])],
      messages: msgs('apple', 'pear', 'plum'),
      settings: { scanDepth: 0 },
    });
    expect(uids(r)).toEqual([9]);
  });

  it('§d.2 names are scanned as "Name: text" only when include names is on', () => {
    const e = [stEntry(1, { key: ['Seraphina'] })];
    const messages = [{ text: 'hello', name: 'Seraphina' }];
    expect(uids(run({ books: [book('b', e)], messages, settings: { includeNames: true } }))).toEqual([1]);
    expect(uids(run({ books: [book('b', e)], messages, settings: { includeNames: false } }))).toEqual([]);
  });

  it('§d.2 messages are joined with \\n\\x01 so a key cannot span two messages', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['end start'] })])],
      messages: msgs('the end', 'start'),
    });
    expect(uids(r)).toEqual([]);
  });

  it('§d.2/§d.8 extra sources are scanned only for entries whose match* flag is on', () => {
    const r = run({
      books: [
        book('b', [
          stEntry(1, { key: ['elf'], matchPersonaDescription: true }),
          stEntry(2, { key: ['elf'] }),
          stEntry(3, { key: ['castle'], matchScenario: true }),
          stEntry(4, { key: ['kind'], matchCharacterDescription: true }),
          stEntry(5, { key: ['shy'], matchCharacterPersonality: true }),
          stEntry(6, { key: ['note'], matchCharacterDepthPrompt: true }),
          stEntry(7, { key: ['author'], matchCreatorNotes: true }),
        ]),
      ],
      messages: msgs('hello'),
      scanSources: {
        persona_description: 'I am an elf',
        scenario: 'in a castle',
        character_description: 'kind',
        character_personality: 'shy',
        character_depth_prompt: 'note',
        creator_notes: 'author',
      },
    });
    expect(uids(r).sort()).toEqual([1, 3, 4, 5, 6, 7]);
  });

  it('§d.2 extension prompts marked scan are part of every entry scan', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['storm'] })])],
      messages: msgs('calm'),
      extensionPrompts: ['A storm comes'],
    });
    expect(uids(r)).toEqual([1]);
  });
});

describe('regex key prefilter (a required literal checked before the pattern runs)', () => {
  it.each([
    ['dra+gon', '', 'dra'],
    ['\\bkaloth[a-z]*ra\\b', 'i', 'kaloth'], // k stays under i: K (Kelvin) lower-cases to k
    ['\\bshalo[a-z]*ra\\b', 'i', 'halo'], // s is left out under i: ſ folds to it and lower-cases to itself
    ['kK', 'i', 'kk'],
    ['colou?r', '', 'colo'],
    ['a|b', '', null],
    ['(dragon)', '', null],
    ['sky', 'i', 'ky'],
    ['x\\.y{2}z', '', 'x.y'],
  ])('/%s/%s → %j', (source, flags, literal) => {
    expect(regexPrefilter(source, flags)?.literal ?? null).toBe(literal);
  });

  it('never rejects a text the pattern matches (fast-check against JS RegExp)', () => {
    const token = fc.constantFrom(
      'a',
      'b',
      'K',
      'k',
      'K',
      's',
      'é',
      '.',
      '\\.',
      'a?',
      'b*',
      'a+',
      'b{0,2}',
      'a{2}',
      '[ab]',
      '(a|b)',
      '\\b',
      '^',
      '$',
      '|',
      'ſ',
      '{',
      '}',
      '\\d',
      '😀',
    );
    const text = fc
      .array(fc.constantFrom('a', 'b', 'k', 'K', 'S', 's', 'ſ', 'é', 'É', '.', ' ', '1', '{', '}', '😀'), {
        maxLength: 12,
      })
      .map((c) => c.join(''));
    fc.assert(
      fc.property(
        fc.array(token, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('', 'i', 'iu', 'u'),
        text,
        (tokens, flags, sample) => {
          const source = tokens.join('');
          let re: RegExp;
          try {
            re = new RegExp(source, flags);
          } catch {
            return;
          }
          const prefilter = regexPrefilter(source, flags);
          if (re.test(sample) && prefilter) {
            const hay = prefilter.caseInsensitive ? sample.toLowerCase() : sample;
            expect(hay.includes(prefilter.literal)).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
