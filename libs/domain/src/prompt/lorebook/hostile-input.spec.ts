import fc from 'fast-check';
import { forkRandom } from '../shared/seeded-random';
import type { TokenCounter } from '../shared/token-counter';
import { filterByInclusionGroups } from './groups';
import { book, msgs, run, stEntry, uids } from './lorebook.test-support';
import { compileKey, Haystack, keyMatches, ScanMeter, SCAN_UNITS, SCAN_WORK_LIMIT } from './matcher';
import { placeLorebookEntries } from './placement';
import { prepareLorebook } from './prepare';
import type { RunEntry } from './run-entry';
import type { TimedEffects } from './timed-effects';
import type { ActivatedLorebookEntry } from './types';

/**
 * Hostile library data (decisions.md "Prompt engine: lorebook", bounds): every shape here was superlinear or
 * took seconds before its bound. Structure is asserted (counts, warnings, equal results), never timings.
 */

/** ST's `filterByInclusionGroups` removal, literally: `splice(indexOf(entry), 1)` (the linear version's reference). */
function referenceGroups(newEntries: RunEntry[], useGroupScoring: boolean, seed: string): RunEntry[] {
  const random = forkRandom(seed, 'groups');
  const list = [...newEntries];
  const grouped = new Map<string, RunEntry[]>();
  for (const e of newEntries) for (const g of e.view.groups) grouped.set(g, [...(grouped.get(g) ?? []), e]);
  const remove = (e: RunEntry) => list.splice(list.indexOf(e), 1);
  for (const group of grouped.values()) {
    if (!useGroupScoring) continue;
    const scores = group.map((e) => e.view.order % 3);
    const max = Math.max(...scores);
    for (let i = 0; i < group.length; i++)
      if (scores[i]! < max) {
        remove(group[i]!);
        group.splice(i, 1);
        scores.splice(i, 1);
        i--;
      }
  }
  for (const group of grouped.values()) {
    if (group.length <= 1) continue;
    const prios = group.filter((e) => e.view.groupOverride).sort((a, b) => b.view.order - a.view.order);
    let winner: RunEntry | null = prios[0] ?? null;
    if (!winner) {
      const total = group.reduce((s, e) => s + e.view.groupWeight, 0);
      const roll = random() * total;
      let current = 0;
      for (const e of group) {
        current += e.view.groupWeight;
        if (roll <= current) {
          winner = e;
          break;
        }
      }
    }
    if (!winner) continue;
    for (const e of group) if (e !== winner) remove(e);
  }
  return list;
}

const noTimed = { isActive: () => false } as unknown as TimedEffects;

function runEntries(specs: Array<{ groups: string; order: number; override: boolean }>): RunEntry[] {
  const prepared = prepareLorebook(
    book(
      'g',
      specs.map((s, uid) =>
        stEntry(uid, { key: ['x'], group: s.groups, order: s.order, groupOverride: s.override }),
      ),
    ),
  );
  return prepared.entries.map((view, slot) => ({
    view,
    book: prepared,
    slot,
    index: slot,
    content: view.content,
  }));
}

const linearGroups = (entries: RunEntry[], useGroupScoring: boolean, seed: string) =>
  filterByInclusionGroups(entries, {
    timed: noTimed,
    useGroupScoring,
    random: forkRandom(seed, 'groups'),
    earlier: [],
    score: (e) => e.view.order % 3,
  });

describe('lorebook hostile input: inclusion groups', () => {
  it('removes entries exactly as ST splice(indexOf) does, including removing an entry twice', () => {
    const spec = fc.record({
      groups: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 3 }).map((g) => g.join(',')),
      order: fc.integer({ min: 0, max: 5 }),
      override: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 12 }), fc.boolean(), fc.string(), (specs, scoring, seed) => {
        const entries = runEntries(specs);
        const expected = referenceGroups(entries, scoring, seed).map((e) => e.view.uid);
        expect(linearGroups(entries, scoring, seed).map((e) => e.view.uid)).toEqual(expected);
      }),
      { numRuns: 1500 },
    );
  });

  it('20,000 members of one group leave one winner; 5,000 entries each in 20 of 50 groups', () => {
    const one = runEntries(
      Array.from({ length: 20_000 }, (_, i) => ({ groups: 'g', order: i, override: false })),
    );
    expect(linearGroups(one, true, 's')).toHaveLength(1);
    const many = runEntries(
      Array.from({ length: 5_000 }, (_, i) => ({
        groups: Array.from({ length: 20 }, (_, j) => `g${(i + j) % 50}`).join(','),
        order: 1,
        override: false,
      })),
    );
    // Every entry loses in up to 20 groups: ST's second removals drop the last live entries, then nothing.
    expect(linearGroups(many, false, 's')).toEqual([]);
  });
});

describe('lorebook hostile input: placement', () => {
  it('20,000 activated entries keep ST order (unshift per entry, highest order last; outlets pushed)', () => {
    const activated: ActivatedLorebookEntry[] = Array.from({ length: 20_000 }, (_, i) => ({
      bookId: 'b',
      bookName: 'b',
      source: 'character',
      uid: i,
      comment: '',
      content: `c${i}`,
      order: i % 7,
      position: [0, 4, 7][i % 3]!,
      depth: i % 50,
      role: 'system',
      outletName: `o${i % 10}`,
      ignoreBudget: false,
      mode: 'key',
      pass: 'initial',
      recursionLevel: 0,
    }));
    const placed = placeLorebookEntries(activated);
    const sorted = activated
      .map((entry, index) => ({ entry, index }))
      .sort((a, b) => b.entry.order - a.entry.order || a.index - b.index)
      .map((x) => x.entry);
    const expectedBefore = sorted.filter((e) => e.position === 0).reverse();
    expect(placed.before.entries.map((p) => p.entry.uid)).toEqual(expectedBefore.map((e) => e.uid));
    const depth7 = sorted.filter((e) => e.position === 4 && e.depth === 7).reverse();
    const group = placed.atDepth.find((g) => g.depth === 7)!;
    expect(group.entries.map((p) => p.entry.uid)).toEqual(depth7.map((e) => e.uid));
    expect(placed.atDepth).toHaveLength(50);
    const outlet = sorted.filter((e) => e.position === 7 && e.outletName === 'o3');
    expect(placed.outlets.find((o) => o.name === 'o3')!.entries.map((p) => p.entry.uid)).toEqual(
      outlet.map((e) => e.uid),
    );
  });
});

/** A character counter that records how much text it was asked to count. */
function meteredCounter(): TokenCounter & { chars: number } {
  const counter = {
    encoding: 'o200k_base' as const,
    chars: 0,
    count(text: string) {
      counter.chars += text.length;
      return text.length;
    },
  };
  return counter;
}

describe('lorebook hostile input: token budget', () => {
  it('2,000 one-token entries inside the slack window after a large one: recounts stop at their allowance', () => {
    const counter = meteredCounter();
    const big = 2_999_900;
    const entries = [
      stEntry(0, { key: ['x'], content: 'y'.repeat(big), order: 1_000 }),
      ...Array.from({ length: 2_000 }, (_, i) => stEntry(i + 1, { key: ['x'], content: '' })),
    ];
    // Budget 3,000,000: the large entry (big + "\n") and 98 one-token entries fit, the 99th reaches it.
    const r = run({
      books: [book('b', entries)],
      messages: msgs('x'),
      maxPromptTokens: 3_000_000,
      tokenCounter: counter,
    });
    expect(r.activated).toHaveLength(99);
    expect(r.budget.overflowed).toBe(true);
    expect(r.warnings.map((w) => w.code)).toEqual(['lorebook_budget_estimated']);
    // Every recount reads ~3,000,000 characters: at most 4x the counted text plus 1,000,000, and one more.
    expect(counter.chars).toBeLessThanOrEqual(big + 2_000 + 4 * (big + 2_000) + 1_000_000 + 2 * big);
  });

  it('at the allowance: a normal book near the budget is decided by exact counts, without the warning', () => {
    const counter = meteredCounter();
    const entries = Array.from({ length: 300 }, (_, i) =>
      stEntry(i, { key: ['x'], content: 'y'.repeat(99) }),
    );
    const r = run({
      books: [book('b', entries)],
      messages: msgs('x'),
      maxPromptTokens: 10_050,
      tokenCounter: counter,
    });
    expect(r.activated).toHaveLength(100);
    expect(r.warnings).toEqual([]);
  });

  it('recursion passes far from the budget never count the whole recursion text', () => {
    const counter = meteredCounter();
    const entries = Array.from({ length: 400 }, (_, i) =>
      stEntry(i, { key: [`k${i}`], content: `k${i + 1} ${'z'.repeat(50)}` }),
    );
    const r = run({
      books: [book('b', entries)],
      messages: msgs('k0'),
      maxPromptTokens: 10_000_000,
      tokenCounter: counter,
      settings: { recursive: true, maxRecursionSteps: 0 },
    });
    expect(r.activated).toHaveLength(400);
    // Each content counted once (with its "\n"); before, every pass counted the growing recursion text too.
    expect(counter.chars).toBe(entries.reduce((sum, e) => sum + e.content.length + 1, 0));
  });
});

describe('lorebook hostile input: scan work', () => {
  it('the meter takes work up to its limit and refuses past it', () => {
    const meter = new ScanMeter(100);
    expect(meter.charge(100)).toBe(true);
    expect(meter.exhausted).toBe(false);
    expect(meter.charge(1)).toBe(false);
    expect(meter.exhausted).toBe(true);
    expect(meter.used).toBe(100);
  });

  it('past the limit a key that would read the text does not match (word-set answers stay free)', () => {
    const hay = new Haystack('alpha beta-gamma');
    const options = { caseSensitive: false, matchWholeWords: false, meter: new ScanMeter(0) };
    expect(keyMatches(compileKey('beta-g'), hay, options)).toBe(false);
    expect(options.meter.exhausted).toBe(true);
    const roomy = { ...options, meter: new ScanMeter(SCAN_WORK_LIMIT) };
    expect(keyMatches(compileKey('beta-g'), hay, roomy)).toBe(true);
    expect(roomy.meter.used).toBe(hay.raw.length * (SCAN_UNITS.grams + SCAN_UNITS.plain));
  });

  it('word-only whole-word keys: indexOf, word set and (long texts) word-hash filter agree with ST', () => {
    const reference = (key: string, text: string) =>
      new RegExp(`(?:^|\\W)(${key.toLowerCase()})(?:$|\\W)`).test(text.toLowerCase());
    const options = { caseSensitive: false, matchWholeWords: true };
    const words = fc.array(fc.constantFrom('ab', 'Ab', 'abc', 'b', 'c_1', ' ', '-', 'é', '\n'), {
      maxLength: 12,
    });
    fc.assert(
      fc.property(words, fc.constantFrom('ab', 'abc', 'b', 'c_1', 'bc'), (parts, key) => {
        const text = parts.join('');
        const fresh = new Haystack(text);
        const warmed = new Haystack(text);
        for (let i = 0; i < 40; i++) keyMatches(compileKey('zz'), warmed, options);
        expect(keyMatches(compileKey(key), fresh, options)).toBe(reference(key, text));
        expect(keyMatches(compileKey(key), warmed, options)).toBe(reference(key, text));
      }),
      { numRuns: 1500 },
    );
    const long = `${'lorem ipsum-dolor '.repeat(60_000)}Zephyr end`;
    const hay = new Haystack(long);
    for (let i = 0; i < 40; i++) keyMatches(compileKey(`absent${i}`), hay, options);
    expect(keyMatches(compileKey('zephyr'), hay, options)).toBe(true);
    expect(keyMatches(compileKey('ipsum'), hay, options)).toBe(true);
    expect(keyMatches(compileKey('psum'), hay, options)).toBe(false);
    expect(keyMatches(compileKey('zeph'), hay, options)).toBe(false);
  });

  it('keys x text past the work limit: later keys do not match and the scan warns', () => {
    // Entries with a two-character key (no trigram filter) absent from a 200,000-character message, enough
    // of them to read 1.2 x the limit in characters; the last entry's key is present.
    const message = 'lorem ipsum dolor sit amet '.repeat(7_500);
    const count = Math.ceil((1.2 * SCAN_WORK_LIMIT) / message.length);
    const entries = Array.from({ length: count }, (_, i) =>
      stEntry(i, { key: [i === count - 1 ? 'lo' : `${String.fromCharCode(0x4e00 + i)}!`], order: count - i }),
    );
    const r = run({ books: [book('b', entries)], messages: msgs(message), settings: { scanDepth: 1 } });
    expect(r.warnings.map((w) => w.code)).toEqual(['lorebook_scan_budget_exhausted']);
    expect(uids(r)).toEqual([]);
    // Within the limit (half of it) the same last key matches.
    const half = Math.floor((0.5 * SCAN_WORK_LIMIT) / message.length);
    const few = run({ books: [book('b', entries.slice(count - half))], messages: msgs(message) });
    expect(uids(few)).toEqual([count - 1]);
    expect(few.warnings).toEqual([]);
  });

  it('2,000 delay levels with unlimited recursion steps: passes stop at the work limit, with the warning', () => {
    const entries = Array.from({ length: 2_000 }, (_, i) =>
      stEntry(i, { key: [`never${i}`], delayUntilRecursion: i + 1 }),
    );
    const r = run({
      books: [book('b', entries)],
      messages: msgs('text'),
      settings: { recursive: true, maxRecursionSteps: 0 },
    });
    expect(r.passes).toBeLessThan(2_000);
    expect(r.passes).toBeGreaterThan(100);
    expect(r.warnings.map((w) => w.code)).toEqual(['lorebook_scan_budget_exhausted']);
    const some = run({
      books: [book('b', entries.slice(0, 20))],
      messages: msgs('text'),
      settings: { recursive: true, maxRecursionSteps: 0 },
    });
    expect(some.passes).toBe(20);
    expect(some.warnings).toEqual([]);
  });
});
