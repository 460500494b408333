import fc from 'fast-check';
import { activateLorebooks } from './activate';
import { book, charCounter, msgs, run, stEntry } from './lorebook.test-support';
import { prepareLorebook } from './prepare';

describe('lorebook match detail (spec 2 worldbook_matches, hits, activated uids)', () => {
  it('reports the first primary key match with source, offsets and excerpt; nothing without debug', () => {
    const b = book('b', [stEntry(1, { key: ['nothing', 'dragon'], comment: 'Dragons', order: 7 })]);
    const messages = [
      { name: 'User', text: 'I saw a dragon over the hills' },
      { name: 'Bot', text: 'ok' },
    ];
    const plain = run({ books: [b], messages, settings: { includeNames: true } });
    expect(plain.matches).toBeNull();
    const r = run({ books: [b], messages, settings: { includeNames: true }, debug: { matches: true } });
    const line = 'User: I saw a dragon over the hills';
    expect(r.matches).toEqual([
      {
        uid: 1,
        comment: 'Dragons',
        content_preview: 'content 1',
        order: 7,
        source: { kind: 'character', worldbook_id: 'b', worldbook_name: 'b-name' },
        insertion: { position: 0, depth: null, role: null, outlet_name: null },
        activation: {
          mode: 'key',
          pass: 'initial',
          recursion_level: 0,
          first_match: {
            source_kind: 'message',
            message_index_from_latest: 1,
            matched_key: 'dragon',
            matched_key_scope: 'primary',
            matched_key_type: 'plain',
            char_start: line.indexOf('dragon'),
            char_end: line.indexOf('dragon') + 6,
            excerpt: line,
          },
        },
      },
    ]);
    expect(r.hits).toEqual([
      {
        worldbook_id: 'b',
        worldbook_name: 'b-name',
        uid: 1,
        comment: 'Dragons',
        order: 7,
        position: 0,
        mode: 'key',
        recursion_level: 0,
      },
    ]);
  });

  it('regex keys, extra sources, recursion and constants are described', () => {
    const long = `${'x'.repeat(100)} DRAGON ${'y'.repeat(100)}`;
    const r = run({
      books: [
        book('b', [
          stEntry(1, { key: ['/drag(on)/i'], position: 4, depth: 2, role: 2 }),
          stEntry(2, { key: ['elf'], matchPersonaDescription: true, content: 'mentions wizard' }),
          stEntry(3, { key: ['wizard'] }),
          stEntry(4, { constant: true, position: 7, outletName: 'o' }),
        ]),
      ],
      messages: msgs(long),
      scanSources: { persona_description: 'An elf' },
      settings: { recursive: true },
      debug: { matches: true },
    });
    const byUid = Object.fromEntries(r.matches!.map((m) => [m.uid, m]));
    expect(byUid[1].activation.first_match).toMatchObject({
      source_kind: 'message',
      matched_key_type: 'regex',
      char_start: 101,
      char_end: 107,
      excerpt: long.slice(71, 137),
    });
    expect(byUid[1].insertion).toEqual({ position: 4, depth: 2, role: 'assistant', outlet_name: null });
    expect(byUid[2].activation.first_match).toMatchObject({
      source_kind: 'persona_description',
      message_index_from_latest: null,
      char_start: 3,
    });
    expect(byUid[3].activation).toMatchObject({
      pass: 'recursion',
      recursion_level: 1,
      first_match: { source_kind: 'recursion' },
    });
    expect(byUid[4].activation).toEqual({
      mode: 'constant',
      pass: 'initial',
      recursion_level: 0,
      first_match: null,
    });
    expect(byUid[4].insertion.outlet_name).toBe('o');
  });
});

describe('lorebook properties (fast-check)', () => {
  const words = ['red', 'blue', 'cat', 'dog', 'sun', 'moon', 'Red', 'tree'];
  const word = fc.constantFrom(...words);
  const entryArb = (uid: number, extended: boolean) =>
    fc
      .record({
        key: fc.array(fc.oneof(word, fc.constant('/mo+n/i'), fc.constant('/(/')), { maxLength: 3 }),
        keysecondary: fc.array(word, { maxLength: 2 }),
        selectiveLogic: fc.integer({ min: 0, max: 3 }),
        content: fc.array(word, { maxLength: 6 }).map((w) => w.join(' ')),
        order: fc.integer({ min: 0, max: 5 }),
        position: fc.integer({ min: 0, max: 7 }),
        constant: fc.boolean(),
        probability: fc.constantFrom(0, 30, 100),
        useProbability: fc.boolean(),
        group: fc.constantFrom('', '', 'g1', 'g2', 'g1,g2'),
        groupOverride: fc.boolean(),
        excludeRecursion: fc.boolean(),
        ...(extended
          ? {
              preventRecursion: fc.boolean(),
              ignoreBudget: fc.boolean(),
              delayUntilRecursion: fc.integer({ min: 0, max: 2 }),
            }
          : {}),
      })
      .map((fields) => stEntry(uid, fields));
  const booksArb = (extended: boolean) =>
    fc
      .integer({ min: 0, max: 12 })
      .chain((n) =>
        fc
          .tuple(...Array.from({ length: n }, (_, i) => entryArb(i, extended)))
          .map((entries) => [book('b', entries)]),
      );
  const inputArb = (extended: boolean) =>
    fc.record({
      books: booksArb(extended),
      messages: fc.array(
        fc.array(word, { maxLength: 5 }).map((w) => ({ text: w.join(' ') })),
        { maxLength: 5 },
      ),
      maxPromptTokens: fc.integer({ min: 0, max: 400 }),
      seed: fc.string({ maxLength: 8 }),
      settings: fc.record({
        scanDepth: fc.integer({ min: 0, max: 4 }),
        recursive: fc.boolean(),
        matchWholeWords: fc.boolean(),
        minActivations: fc.integer({ min: 0, max: 3 }),
        maxRecursionSteps: fc.integer({ min: 0, max: 3 }),
        useGroupScoring: fc.boolean(),
      }),
    });

  it('is deterministic for a fixed seed (also with recursion, groups, probability, delays)', () => {
    fc.assert(
      fc.property(inputArb(true), (input) => {
        const a = activateLorebooks({ ...input, tokenCounter: charCounter, debug: { matches: true } });
        const b = activateLorebooks({ ...input, tokenCounter: charCounter, debug: { matches: true } });
        expect(b).toEqual(a);
      }),
      { numRuns: 300 },
    );
  });

  it('never exceeds the budget (without ignoreBudget; §d.5: the activated text stays below it)', () => {
    fc.assert(
      fc.property(inputArb(false), (input) => {
        const r = activateLorebooks({
          ...input,
          settings: { ...input.settings, budgetPercent: 25 },
          tokenCounter: charCounter,
        });
        const used = r.activated.reduce((sum, a) => sum + a.content.length + 1, 0);
        expect(used === 0 || used < r.budget.limit).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('prepared books give the same result as raw books', () => {
    fc.assert(
      fc.property(inputArb(true), (input) => {
        const raw = activateLorebooks({ ...input, tokenCounter: charCounter });
        const prepared = activateLorebooks({
          ...input,
          books: input.books.map((b) => prepareLorebook(b)),
          tokenCounter: charCounter,
        });
        expect(prepared).toEqual(raw);
      }),
      { numRuns: 100 },
    );
  });

  it('never throws on malformed input (problems become warnings)', () => {
    fc.assert(
      fc.property(
        fc.anything(),
        fc.anything(),
        fc.anything(),
        fc.anything(),
        (books, messages, settings, timedState) => {
          const r = activateLorebooks({
            books: [
              book('b', [stEntry(1, { key: ['x'] })]),
              ...(Array.isArray(books) ? books : [books]),
            ] as never,
            messages: messages as never,
            settings: settings as never,
            timedState: timedState as never,
            maxPromptTokens: 100,
            seed: 's',
          });
          expect(Array.isArray(r.activated)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
    const garbageEntries = activateLorebooks({
      books: [
        {
          id: 'g',
          name: 'g',
          source: 'global',
          entries: [null, 5, { uid: 'x' }, { uid: 2, keys: 'x', raw: 7, content: 9 }] as never,
        },
      ],
      messages: msgs('x'),
      maxPromptTokens: 100,
      seed: 's',
      extensionPrompts: 'nope' as never,
      forcedActivations: {} as never,
      character: { tags: 'x' } as never,
      tokenCounter: {} as never,
    });
    expect(garbageEntries.activated).toEqual([]);
  });
});
