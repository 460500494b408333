import fc from 'fast-check';
import { tokenCounter } from '../shared/token-counter';
import { book, msgs, run, stEntry, uids } from './lorebook.test-support';
import { readLorebookEntry } from './entry';
import { lorebookBudget, DEFAULT_LOREBOOK_SETTINGS } from './settings';

const text = (n: number, c = 'a') => c.repeat(n);

describe('lorebook token budget (external-formats.md §d.5.3)', () => {
  // maxPromptTokens 100 × 25 % = budget 25; one token per character; each entry adds content + '\n'.
  const base = { maxPromptTokens: 100, settings: { budgetPercent: 25 } };

  it('§d.5 budget = round(percent × max prompt tokens / 100), at least 1, capped', () => {
    const s = { ...DEFAULT_LOREBOOK_SETTINGS };
    expect(lorebookBudget(s, 3795)).toBe(949);
    expect(lorebookBudget(s, 0)).toBe(1);
    expect(lorebookBudget({ ...s, budgetCap: 100 }, 3795)).toBe(100);
    expect(lorebookBudget({ ...s, budgetCap: 1000 }, 3795)).toBe(949);
  });

  it('§d.5 at the limit: entries totalling budget−1 tokens all fit', () => {
    const r = run({
      ...base,
      books: [
        book('b', [
          stEntry(1, { key: ['x'], order: 200, content: text(10) }),
          stEntry(2, { key: ['x'], content: text(12) }),
        ]),
      ],
      messages: msgs('x'),
    });
    expect(uids(r)).toEqual([1, 2]);
    expect(r.budget).toEqual({ limit: 25, overflowed: false });
  });

  it('§d.5 one past the limit: the lowest-priority entry is trimmed and the overflow is reported', () => {
    const r = run({
      ...base,
      books: [
        book('b', [
          stEntry(1, { key: ['x'], order: 200, content: text(10) }),
          stEntry(2, { key: ['x'], content: text(13) }),
        ]),
      ],
      messages: msgs('x'),
    });
    expect(uids(r)).toEqual([1]);
    expect(r.budget.overflowed).toBe(true);
  });

  it('§d.5 after an overflow later candidates are dropped, but ignoreBudget entries still fire', () => {
    const r = run({
      ...base,
      books: [
        book('b', [
          stEntry(1, { key: ['x'], order: 300, content: text(30) }),
          stEntry(2, { key: ['x'], order: 200, content: text(1) }),
          stEntry(3, { key: ['x'], order: 100, content: text(40), ignoreBudget: true }),
        ]),
      ],
      messages: msgs('x'),
    });
    expect(uids(r)).toEqual([3]);
  });

  it('§d.5 the cap applies (budget_cap)', () => {
    const r = run({
      maxPromptTokens: 10_000,
      settings: { budgetPercent: 100, budgetCap: 25 },
      books: [
        book('b', [
          stEntry(1, { key: ['x'], order: 200, content: text(10) }),
          stEntry(2, { key: ['x'], content: text(13) }),
        ]),
      ],
      messages: msgs('x'),
    });
    expect(uids(r)).toEqual([1]);
  });

  it('§d.5 content activated in earlier passes counts against later passes; an overflow stops recursion', () => {
    const entries = (second: number) => [
      stEntry(1, { key: ['x'], content: `${text(9)} y` }), // 11 chars + '\n' in the scanned text
      stEntry(2, { key: ['y'], content: `z${text(second - 1)}` }),
      stEntry(3, { key: ['z'], content: 'w' }),
    ];
    const fits = run({
      ...base,
      settings: { ...base.settings, recursive: true },
      books: [book('b', entries(11))],
      messages: msgs('x'),
    });
    expect(uids(fits)).toEqual([1, 2]); // 12 + 12 = 24 < 25; uid 3 would need 2 more
    const past = run({
      ...base,
      settings: { ...base.settings, recursive: true },
      books: [book('b', entries(12))],
      messages: msgs('x'),
    });
    expect(uids(past)).toEqual([1]);
    expect(past.passes).toBe(2);
  });

  it('§d.5 a real tokenizer count is exact at the limit (the fast path never changes the decision)', () => {
    const counter = tokenCounter('o200k_base');
    const contents = [
      'The quick brown fox jumps over the lazy dog.',
      'Pack my box with five dozen liquor jugs.',
      'Sphinx of black quartz, judge my vow.',
    ];
    const joined = (n: number) =>
      contents
        .slice(0, n)
        .map((c) => `${c}\n`)
        .join('');
    for (const n of [1, 2, 3]) {
      const limit = counter.count(joined(n)); // exactly at the budget: the n-th entry overflows
      const r = run({
        tokenCounter: counter,
        maxPromptTokens: limit,
        settings: { budgetPercent: 100 },
        books: [
          book(
            'b',
            contents.map((content, i) => stEntry(i + 1, { key: ['x'], order: 100 - i, content })),
          ),
        ],
        messages: msgs('x'),
      });
      expect(r.activated.length).toBe(n - 1);
    }
  });
});

describe('lorebook probability (external-formats.md §d.5.3)', () => {
  const entry = (fields: object) => book('b', [stEntry(1, { key: ['x'], ...fields })]);

  it.each([
    [{ probability: 0, useProbability: true }, false],
    [{ probability: 100, useProbability: true }, true],
    [{ probability: 0, useProbability: false }, true],
    [{ probability: 0 }, true], // a missing useProbability skips the roll (ST's runtime check)
  ])('§d.5 probability %j → fires %s', (fields, fires) => {
    for (const seed of ['a', 'b', 'c', 'd'])
      expect(uids(run({ books: [entry(fields)], messages: msgs('x'), seed }))).toEqual(fires ? [1] : []);
  });

  it('§d.5 a 50 % roll is seeded: same seed same result, and about half of the seeds pass', () => {
    const fires = (seed: string) =>
      run({ books: [entry({ probability: 50, useProbability: true })], messages: msgs('x'), seed }).activated
        .length;
    const seeds = Array.from({ length: 200 }, (_, i) => `seed-${i}`);
    const results = seeds.map(fires);
    expect(seeds.map(fires)).toEqual(results);
    const passed = results.filter((x) => x === 1).length;
    expect(passed).toBeGreaterThan(60);
    expect(passed).toBeLessThan(140);
  });

  it('§d.5 a failed roll is never retried in the same generation (recursion)', () => {
    const r = run({
      settings: { recursive: true },
      books: [
        book('b', [
          stEntry(1, { key: ['x'], content: 'y' }),
          stEntry(2, { key: ['x', 'y'], probability: 0, useProbability: true }),
        ]),
      ],
      messages: msgs('x'),
    });
    expect(uids(r)).toEqual([1]);
  });
});

describe('lorebook inclusion groups (external-formats.md §d.5.2)', () => {
  it('§d.5.2 one member of a group survives; the weighted pick is seeded', () => {
    const b = book('b', [
      stEntry(1, { key: ['x'], group: 'g' }),
      stEntry(2, { key: ['x'], group: 'g' }),
      stEntry(3, { key: ['x'] }),
    ]);
    const winners = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const r = run({ books: [b], messages: msgs('x'), seed: `s${i}` });
      expect(uids(r)).toHaveLength(2);
      expect(uids(r)).toContain(3);
      expect(run({ books: [b], messages: msgs('x'), seed: `s${i}` }).activated).toEqual(r.activated);
      winners.add(uids(r).find((u) => u !== 3)!);
    }
    expect([...winners].sort()).toEqual([1, 2]);
  });

  it('§d.5.2 groupWeight decides the pick (weight 0 never wins against 100)', () => {
    const b = book('b', [
      stEntry(1, { key: ['x'], group: 'g', groupWeight: 0 }),
      stEntry(2, { key: ['x'], group: 'g', groupWeight: 100 }),
    ]);
    for (let i = 0; i < 20; i++)
      expect(uids(run({ books: [b], messages: msgs('x'), seed: `w${i}` }))).toEqual([2]);
  });

  it('§d.5.2 groupOverride: the prioritised member with the highest order wins', () => {
    const b = book('b', [
      stEntry(1, { key: ['x'], group: 'g', order: 900 }),
      stEntry(2, { key: ['x'], group: 'g', order: 100, groupOverride: true }),
      stEntry(3, { key: ['x'], group: 'g', order: 200, groupOverride: true }),
    ]);
    expect(uids(run({ books: [b], messages: msgs('x') }))).toEqual([3]);
  });

  it('§d.5.2 group scoring keeps the members with the most matching keys (global or per entry)', () => {
    const entries = (scoring: object) => [
      stEntry(1, { key: ['x'], group: 'g', groupWeight: 100, ...scoring }),
      stEntry(2, { key: ['x', 'y'], group: 'g', groupWeight: 0, ...scoring }),
    ];
    expect(
      uids(
        run({ books: [book('b', entries({}))], messages: msgs('x y'), settings: { useGroupScoring: true } }),
      ),
    ).toEqual([2]);
    expect(
      uids(run({ books: [book('b', entries({ useGroupScoring: true }))], messages: msgs('x y') })),
    ).toEqual([2]);
    // Scoring off: weight decides.
    expect(uids(run({ books: [book('b', entries({}))], messages: msgs('x y') }))).toEqual([1]);
  });

  it('§d.5.2 AND_ANY secondary matches add to the score', () => {
    const b = book('b', [
      stEntry(1, { key: ['x', 'y'], group: 'g', groupWeight: 100 }),
      stEntry(2, { key: ['x'], keysecondary: ['y', 'z'], group: 'g', groupWeight: 0, selectiveLogic: 0 }),
    ]);
    expect(uids(run({ books: [b], messages: msgs('x y z'), settings: { useGroupScoring: true } }))).toEqual([
      2,
    ]);
  });

  it('§d.5.2 a comma list puts the entry in several groups', () => {
    const b = book('b', [
      stEntry(1, { key: ['x'], group: 'a, b', groupOverride: true, order: 50 }),
      stEntry(2, { key: ['x'], group: 'a' }),
      stEntry(3, { key: ['x'], group: 'b' }),
    ]);
    expect(uids(run({ books: [b], messages: msgs('x') }))).toEqual([1]);
  });

  it('§d.5.2 a group that already fired in an earlier pass drops all its new members', () => {
    const b = book('b', [
      stEntry(1, { key: ['x'], group: 'g', content: 'y' }),
      stEntry(2, { key: ['y'], group: 'g' }),
    ]);
    const r = run({ books: [b], messages: msgs('x'), settings: { recursive: true } });
    expect(uids(r)).toEqual([1]);
  });
});

describe('lorebook budget with the real tokenizer (§d.5, fast-check)', () => {
  const counter = tokenCounter('o200k_base');
  const piece = fc.constantFrom(
    'word',
    ' word',
    'Hello',
    '\n',
    '\n\n',
    '  ',
    '   \n',
    '.',
    '!!',
    '😀',
    'éà',
    '123',
    '\t',
    ' ',
  );
  const content = fc.array(piece, { maxLength: 12 }).map((p) => p.join(''));

  it('the estimate never changes a decision: same result as counting the whole new content every time', () => {
    fc.assert(
      fc.property(
        fc.array(content, { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 120 }),
        (contents, limit) => {
          const r = run({
            tokenCounter: counter,
            maxPromptTokens: limit,
            settings: { budgetPercent: 100 },
            books: [
              book(
                'b',
                contents.map((c, i) => stEntry(i + 1, { key: ['x'], order: 1000 - i, content: c })),
              ),
            ],
            messages: msgs('x'),
          });
          // Reference (§d.5): activate in order while the whole joined content stays below the budget.
          let expected = 0;
          while (
            expected < contents.length &&
            counter.count(
              contents
                .slice(0, expected + 1)
                .map((c) => `${c}\n`)
                .join(''),
            ) < limit
          )
            expected++;
          expect(r.activated.length).toBe(expected);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('inclusion groups as ST 1.18 `filterByInclusionGroups` removes entries', () => {
  it('a group with sticky entries is left alone: every sticky member stays, no roll', () => {
    // ST world-info.js `filterGroupsByTimedEffects` drops the group's non-sticky entries and marks it
    // (`hasStickyMap`); `filterGroupsByScoring` and the main loop then `continue` for that group.
    const b = book('b', [
      stEntry(1, { key: ['zzz'], group: 'g', sticky: 5 }),
      stEntry(2, { key: ['zzz'], group: 'g', sticky: 5 }),
      stEntry(3, { key: ['x'], group: 'g' }),
    ]);
    const record = (i: number) => ({
      hash: readLorebookEntry(b.entries[i], b).hash,
      start: 2,
      end: 7,
      protected: false,
    });
    const timedState = { sticky: { 'b.1': record(0), 'b.2': record(1) }, cooldown: {} };
    for (const seed of ['a', 'b', 'c', 'd']) {
      const r = run({ books: [b], messages: msgs('x'), chatLength: 4, timedState, seed });
      expect(uids(r).sort()).toEqual([1, 2]);
    }
  });

  it('an entry that loses in two of its groups is removed twice: ST `splice(-1, 1)` drops the last entry', () => {
    // ST `removeEntry = (entry) => newEntries.splice(newEntries.indexOf(entry), 1)`: for 'a' the override
    // winner 2 removes 1; for 'b' the override winner 3 removes 1 again, `indexOf` is -1, and the last entry
    // of the pass (4, lowest order, no group) goes instead.
    const r = run({
      books: [
        book('b', [
          stEntry(1, { key: ['x'], order: 400, group: 'a,b' }),
          stEntry(2, { key: ['x'], order: 300, group: 'a', groupOverride: true }),
          stEntry(3, { key: ['x'], order: 200, group: 'b', groupOverride: true }),
          stEntry(4, { key: ['x'], order: 100 }),
        ]),
      ],
      messages: msgs('x'),
    });
    expect(uids(r).sort()).toEqual([2, 3]);
  });
});
