import { book, msgs, run, stEntry, uids } from './lorebook.test-support';
import { DEFAULT_LOREBOOK_SETTINGS, resolveLorebookSettings } from './settings';

describe('lorebook per-entry decision (external-formats.md §d.4)', () => {
  it('§d.4.1 disabled entries never fire, even constant ones', () => {
    const r = run({
      books: [
        book('b', [stEntry(1, { key: ['x'], disable: true }), stEntry(2, { constant: true, disable: true })]),
      ],
      messages: msgs('x'),
    });
    expect(uids(r)).toEqual([]);
  });

  it('§d.4.9 constant entries fire without keys', () => {
    expect(uids(run({ books: [book('b', [stEntry(1, { constant: true })])] }))).toEqual([1]);
  });

  it('§d.4.11 an entry without primary keys never fires on keys', () => {
    expect(uids(run({ books: [book('b', [stEntry(1, { key: [] })])], messages: msgs('content 1') }))).toEqual(
      [],
    );
  });

  it.each([
    ['normal', ['normal'], true],
    ['continue', ['normal'], false],
    ['swipe', ['normal', 'swipe'], true],
    ['quiet', [], true],
  ] as const)('§d.4.2 triggers: intent %s with triggers %j → fires %s', (intent, triggers, fires) => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['x'], triggers })])],
      messages: msgs('x'),
      intent,
    });
    expect(uids(r)).toEqual(fires ? [1] : []);
    expect(r.triggerFilteredEntries).toEqual(fires ? [] : [{ bookId: 'b', uid: 1 }]);
  });

  it.each([
    ['names include the character', { names: ['sera'], tags: [], isExclude: false }, true],
    ['names do not include the character', { names: ['other'], tags: [], isExclude: false }, false],
    ['names exclude the character', { names: ['sera'], tags: [], isExclude: true }, false],
    ['tags include one of the character tags', { names: [], tags: ['fantasy'], isExclude: false }, true],
    ['tags exclude one of the character tags', { names: [], tags: ['fantasy'], isExclude: true }, false],
    ['tags without a match', { names: [], tags: ['scifi'], isExclude: false }, false],
  ])('§d.4.3 characterFilter: %s', (_name, characterFilter, fires) => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['x'], characterFilter })])],
      messages: msgs('x'),
      character: { filename: 'sera', tags: ['fantasy'] },
    });
    expect(uids(r)).toEqual(fires ? [1] : []);
  });

  it('§d.4.7 @@activate fires without keys and is stripped; @@dont_activate blocks even a constant', () => {
    const r = run({
      books: [
        book('b', [
          stEntry(1, { content: '@@activate\nhello' }),
          stEntry(2, { content: '@@dont_activate\nbye', constant: true }),
          stEntry(3, { content: '@@@activate\nnot a fallback' }),
        ]),
      ],
    });
    expect(r.activated.map((a) => [a.uid, a.content, a.mode])).toEqual([[1, 'hello', 'decorator']]);
  });

  it('§d.4.8 forced activations fire', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['nope'] })])],
      forcedActivations: [{ bookId: 'b', uid: 1 }],
    });
    expect(r.activated.map((a) => a.mode)).toEqual(['forced']);
  });

  // §d.4.12 secondary keys: primary "sword" present; secondary "fire" present, "ice" absent.
  it.each([
    [0, ['fire', 'ice'], true, 'AND_ANY: one secondary matches'],
    [0, ['ice'], false, 'AND_ANY: none match'],
    [1, ['fire', 'ice'], true, 'NOT_ALL: one does not match'],
    [1, ['fire'], false, 'NOT_ALL: all match'],
    [2, ['ice'], true, 'NOT_ANY: none match'],
    [2, ['fire', 'ice'], false, 'NOT_ANY: one matches'],
    [3, ['fire', 'sword'], true, 'AND_ALL: all match'],
    [3, ['fire', 'ice'], false, 'AND_ALL: one missing'],
  ])('§d.4.12 selectiveLogic %i with %j → %s (%s)', (selectiveLogic, keysecondary, fires) => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['sword'], keysecondary, selectiveLogic })])],
      messages: msgs('a sword of fire'),
    });
    expect(uids(r)).toEqual(fires ? [1] : []);
  });

  it('§d.4.12 secondary keys are ignored when selective is false; missing selectiveLogic is AND_ANY', () => {
    const r = run({
      books: [
        book('b', [
          stEntry(1, { key: ['sword'], keysecondary: ['ice'], selective: false }),
          stEntry(2, { key: ['sword'], keysecondary: ['ice'] }),
        ]),
      ],
      messages: msgs('a sword of fire'),
    });
    expect(uids(r)).toEqual([1]);
  });
});

describe('lorebook sources and sorted order (external-formats.md §d.1)', () => {
  const mk = (id: string, source: 'chat' | 'persona' | 'global' | 'character', uid: number, order: number) =>
    book(id, [stEntry(uid, { key: ['x'], order, content: `${id}${uid}` })], source);

  it('§d.1 chat lore, then persona lore, then character-first strategy decide who survives the budget', () => {
    // Budget 4 tokens ('ab\n' = 3 per entry): only the first entry in sorted order fits.
    const books = [
      mk('g', 'global', 1, 500),
      mk('c', 'character', 2, 400),
      mk('p', 'persona', 3, 1),
      mk('h', 'chat', 4, 0),
    ];
    const first = (extra: object) =>
      run({ books, messages: msgs('x'), maxPromptTokens: 4, ...extra }).activated.map((a) => a.bookId);
    expect(first({})).toEqual(['h']);
    expect(first({ books: books.slice(0, 3) })).toEqual(['p']);
    expect(first({ books: books.slice(0, 2), settings: { characterStrategy: 'character_first' } })).toEqual([
      'c',
    ]);
    expect(first({ books: books.slice(0, 2), settings: { characterStrategy: 'global_first' } })).toEqual([
      'g',
    ]);
    expect(first({ books: books.slice(0, 2), settings: { characterStrategy: 'evenly' } })).toEqual(['g']);
  });

  it('§d.1 a book already included through an earlier source is skipped (warning)', () => {
    const entries = [stEntry(1, { key: ['x'] })];
    const r = run({
      books: [
        { id: 'same', name: 'Same', source: 'character', entries },
        { id: 'same', name: 'Same', source: 'chat', entries },
      ],
      messages: msgs('x'),
    });
    expect(r.activated.map((a) => [a.bookId, a.source])).toEqual([['same', 'chat']]);
    expect(r.warnings.map((w) => w.code)).toEqual(['duplicate_book_skipped']);
  });

  it('§d.1 ST defaults: DEFAULT_LOREBOOK_SETTINGS are the shipped values (§c, §j)', () => {
    expect(DEFAULT_LOREBOOK_SETTINGS).toEqual({
      scanDepth: 2,
      minActivations: 0,
      minActivationsDepthMax: 0,
      budgetPercent: 25,
      budgetCap: 0,
      includeNames: true,
      recursive: true,
      maxRecursionSteps: 0,
      caseSensitive: false,
      matchWholeWords: true,
      useGroupScoring: false,
      characterStrategy: 'character_first',
    });
  });

  it('bad settings fall back to the defaults with a warning', () => {
    const { settings, warnings } = resolveLorebookSettings({
      scanDepth: -1,
      recursive: 'yes' as never,
      budgetPercent: 10,
    });
    expect(settings.scanDepth).toBe(2);
    expect(settings.recursive).toBe(true);
    expect(settings.budgetPercent).toBe(10);
    expect(warnings.map((w) => w.setting)).toEqual(['scanDepth', 'recursive']);
  });
});

describe('lorebook recursion and further passes (external-formats.md §d.6)', () => {
  const chain = (extra: Record<number, object> = {}) =>
    book('b', [
      stEntry(1, { key: ['alpha'], content: 'mentions beta', ...extra[1] }),
      stEntry(2, { key: ['beta'], content: 'mentions gamma', ...extra[2] }),
      stEntry(3, { key: ['gamma'], content: 'the end', ...extra[3] }),
    ]);

  it('§d.6 recursion scans activated content in further passes', () => {
    const r = run({ books: [chain()], messages: msgs('alpha'), settings: { recursive: true } });
    expect(r.activated.map((a) => [a.uid, a.pass, a.recursionLevel])).toEqual([
      [1, 'initial', 0],
      [2, 'recursion', 1],
      [3, 'recursion', 2],
    ]);
  });

  it('§d.6 without recursion only the chat is scanned', () => {
    expect(uids(run({ books: [chain()], messages: msgs('alpha'), settings: { recursive: false } }))).toEqual([
      1,
    ]);
  });

  it('§d.6 maxRecursionSteps caps the number of passes (the first counts)', () => {
    const r = run({
      books: [chain()],
      messages: msgs('alpha'),
      settings: { recursive: true, maxRecursionSteps: 2 },
    });
    expect(uids(r)).toEqual([1, 2]);
    expect(r.passes).toBe(2);
  });

  it('§d.4.6 excludeRecursion: cannot be activated by recursion', () => {
    const r = run({
      books: [chain({ 2: { excludeRecursion: true } })],
      messages: msgs('alpha'),
      settings: { recursive: true },
    });
    expect(uids(r)).toEqual([1]);
  });

  it('§d.4.6 excludeRecursion entries still fire from the chat', () => {
    const r = run({
      books: [chain({ 2: { excludeRecursion: true } })],
      messages: msgs('beta'),
      settings: { recursive: true },
    });
    expect(uids(r)).toEqual([2, 3]);
  });

  it('§d.6 preventRecursion: its content does not feed the recursion buffer', () => {
    const r = run({
      books: [chain({ 1: { preventRecursion: true } })],
      messages: msgs('alpha'),
      settings: { recursive: true },
    });
    expect(uids(r)).toEqual([1]);
  });

  it('§d.4.5 delayUntilRecursion: only in a recursion pass, at its level or later', () => {
    const b = book('b', [
      stEntry(1, { key: ['alpha'], content: 'x' }),
      stEntry(2, { key: ['alpha'], delayUntilRecursion: 1, content: 'y' }),
      stEntry(3, { key: ['alpha'], delayUntilRecursion: 2, content: 'z' }),
    ]);
    const r = run({ books: [b], messages: msgs('alpha'), settings: { recursive: true } });
    // Pass 2 (recursion, level 1) fires uid 2; pass 3 finds nothing at level 1; pass 4 opens level 2;
    // pass 5 scans the content of uid 3 and finds nothing.
    expect(r.activated.map((a) => [a.uid, a.recursionLevel])).toEqual([
      [1, 0],
      [2, 1],
      [3, 3],
    ]);
    expect(r.passes).toBe(5);
    // Old files store `true` for level 1. The lowest level is the starting level, so with nothing else
    // recursing it never gets a pass (ST's behaviour).
    const oldBook = book('o', [
      stEntry(1, { key: ['alpha'], delayUntilRecursion: true }),
      stEntry(2, { key: ['alpha'] }),
    ]);
    const old = run({ books: [oldBook], messages: msgs('alpha'), settings: { recursive: true } });
    expect(old.activated.map((a) => [a.uid, a.pass])).toEqual([
      [2, 'initial'],
      [1, 'recursion'],
    ]);
    const alone = run({
      books: [book('o', [stEntry(1, { key: ['alpha'], delayUntilRecursion: true })])],
      messages: msgs('alpha'),
    });
    expect(uids(alone)).toEqual([]);
  });

  it('§d.6 min activations scans deeper until enough entries fire', () => {
    const b = book('b', [stEntry(1, { key: ['apple'] }), stEntry(2, { key: ['pear'] })]);
    const r = run({
      books: [b],
      messages: msgs('apple', 'x', 'y', 'pear'),
      settings: { scanDepth: 1, minActivations: 2 },
    });
    expect(r.activated.map((a) => [a.uid, a.pass])).toEqual([
      [2, 'initial'],
      [1, 'min_activations'],
    ]);
    const capped = run({
      books: [b],
      messages: msgs('apple', 'x', 'y', 'pear'),
      settings: { scanDepth: 1, minActivations: 2, minActivationsDepthMax: 2 },
    });
    expect(uids(capped)).toEqual([2]);
  });
});

describe('lorebook placement (external-formats.md §d.7, §j)', () => {
  it('§d.7/§j each list is in ascending order; ties fall in reverse activation order', () => {
    const r = run({
      books: [
        book('b', [
          stEntry(1, { key: ['x'], order: 300, content: 'A' }),
          stEntry(2, { key: ['x'], order: 100, content: 'B' }),
          stEntry(3, { key: ['x'], order: 200, content: 'C' }),
          stEntry(4, { key: ['x'], order: 100, content: 'D' }),
          stEntry(5, { key: ['x'], order: 50, content: 'E', position: 1 }),
        ]),
      ],
      messages: msgs('x'),
    });
    expect(r.placement.before.content).toBe('D\nB\nC\nA');
    expect(r.placement.after.content).toBe('E');
  });

  it('§d.7 positions 2-7: author note top/bottom, depth groups by (depth, role), examples, outlets', () => {
    const r = run({
      books: [
        book('b', [
          stEntry(1, { constant: true, position: 2, content: 'top', order: 1 }),
          stEntry(2, { constant: true, position: 3, content: 'bottom' }),
          stEntry(3, { constant: true, position: 4, depth: 2, role: 1, content: 'd2u-high', order: 200 }),
          stEntry(4, { constant: true, position: 4, depth: 2, role: 1, content: 'd2u-low', order: 10 }),
          stEntry(5, { constant: true, position: 4, depth: 0, role: 2, content: 'd0a' }),
          stEntry(6, { constant: true, position: 5, content: 'em-top' }),
          stEntry(7, { constant: true, position: 6, content: 'em-bottom', order: 1 }),
          stEntry(8, { constant: true, position: 7, outletName: 'weather', content: 'rain' }),
          stEntry(9, { constant: true, position: 7, outletName: '', content: 'lost' }),
          stEntry(10, { constant: true, position: 9, content: 'odd' }),
          stEntry(11, { constant: true, position: 0, content: '' }),
        ]),
      ],
    });
    expect(r.placement.authorsNoteTop.content).toBe('top');
    expect(r.placement.authorsNoteBottom.content).toBe('bottom');
    expect(r.placement.atDepth.map((g) => [g.depth, g.role, g.content])).toEqual([
      [2, 'user', 'd2u-low\nd2u-high'],
      [0, 'assistant', 'd0a'],
    ]);
    expect(r.placement.examples.map((e) => [e.position, e.content])).toEqual([
      ['after', 'em-bottom'],
      ['before', 'em-top'],
    ]);
    expect(r.placement.outlets).toEqual([expect.objectContaining({ name: 'weather', content: 'rain' })]);
    expect(r.warnings.map((w) => [w.code, w.uid])).toEqual([
      ['outlet_without_name', 9],
      ['unknown_position', 10],
    ]);
    // Empty content is activated (and reported) but not placed.
    expect(uids(r)).toContain(11);
    expect(r.placement.before.entries).toEqual([]);
    // Activation order = sorted order (order desc, then uid).
    expect(r.activatedEntryUids).toEqual({ b: [3, 2, 5, 6, 8, 9, 10, 11, 4, 1, 7] });
  });

  it('§d.7 an outlet lists its entries highest order first (ST pushes outlet entries)', () => {
    // ST 1.18 public/scripts/world-info.js checkWorldInfo, "BUILDING PROMPT": the activated entries are
    // sorted by `b.order - a.order`; before/after/AN/EM/depth lists `unshift` (ascending result), but
    // `WIOutletEntries[entry.outletName].push(content)`. Sorted: C(300), A(200), B(100) → "C\nA\nB".
    const r = run({
      books: [
        book('b', [
          stEntry(1, { constant: true, position: 7, outletName: 'o', content: 'A', order: 200 }),
          stEntry(2, { constant: true, position: 7, outletName: 'o', content: 'B', order: 100 }),
          stEntry(3, { constant: true, position: 7, outletName: 'o', content: 'C', order: 300 }),
        ]),
      ],
    });
    expect(r.placement.outlets).toEqual([expect.objectContaining({ name: 'o', content: 'C\nA\nB' })]);
  });

  it('§d.7/§d.8 content macros are substituted once the entry is activated', () => {
    const r = run({
      books: [book('b', [stEntry(1, { constant: true, content: '{{user}} is here' })])],
      substitute: (t) => t.replace('{{user}}', 'Bob'),
    });
    expect(r.placement.before.content).toBe('Bob is here');
  });
});
