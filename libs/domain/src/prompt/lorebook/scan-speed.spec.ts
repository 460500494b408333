import fc from 'fast-check';
import { book, msgs, run, stEntry, uids } from './lorebook.test-support';
import { compileKey, Haystack, keyMatches, keyMatchesAfterMiss, type KeyMatchOptions } from './matcher';
import { ScanBuffer } from './scan-buffer';

/**
 * The structures that make the scan cheaper (decisions.md "Prompt engine: lorebook", scan speed) must give
 * the answers of plain matching: the trigram filter, the appended-text shortcut of
 * recursion passes, the pre-sorted entry order and the newest-messages-only scan buffer.
 */

/** ST `matchKeys` for a plain key, literally (§d.3). */
function reference(key: string, text: string, options: KeyMatchOptions): boolean {
  const hay = options.caseSensitive ? text : text.toLowerCase();
  const needle = options.caseSensitive ? key : key.toLowerCase();
  if (!options.matchWholeWords || /\s/.test(key)) return hay.includes(needle);
  const escaped = needle.replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&');
  return new RegExp(`(?:^|\\W)(${escaped})(?:$|\\W)`).test(hay);
}

const JOINER = '\n\x01';
// Word and non-word characters, case pairs, the characters whose lower-casing is special, the joiner's own.
const alphabet = fc.constantFrom(..."abAB_1 -.'\n\x01\tΣσςſKİé".split(''), 'ab', 'Ab', 'b a', 'ΑΣ');
const textArb = fc.array(alphabet, { maxLength: 14 }).map((parts) => parts.join(''));
const keyArb = fc
  .array(alphabet, { minLength: 1, maxLength: 5 })
  .map((parts) => parts.join('').trim())
  .filter((k) => k.length > 0 && !k.startsWith('/'));
const optionsArb = fc.record({ caseSensitive: fc.boolean(), matchWholeWords: fc.boolean() });

describe('lorebook scan speed structures', () => {
  it('a plain key on a fresh text agrees with ST matching (trigram filter, word sets)', () => {
    fc.assert(
      fc.property(textArb, keyArb, optionsArb, (text, key, options) => {
        expect(keyMatches(compileKey(key), new Haystack(text), options)).toBe(reference(key, text, options));
      }),
      { numRuns: 3000 },
    );
  });

  it('a key that missed the earlier text matches the appended text exactly when ST matching says so', () => {
    fc.assert(
      fc.property(
        textArb,
        fc.array(textArb, { minLength: 1, maxLength: 3 }),
        fc.array(keyArb, { minLength: 1, maxLength: 6 }),
        optionsArb,
        (first, tails, keys, options) => {
          const compiled = keys.map((k) => compileKey(k));
          let hay = new Haystack(first);
          let raw = first;
          for (const tail of tails) {
            const base = hay;
            raw = `${raw}${JOINER}${tail}`;
            hay = new Haystack(raw, { base, tail });
            expect(hay.base).toBe(base);
            compiled.forEach((k, i) => {
              const expected = reference(keys[i]!, raw, options);
              expect(keyMatches(k, hay, options)).toBe(expected);
              if (!reference(keys[i]!, base.raw, options))
                expect(keyMatchesAfterMiss(k, hay, options)).toBe(expected);
            });
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a regex key prefilter never rejects a text the key regex engine matches (k, K, s, ſ under i)', () => {
    const token = fc.constantFrom('k', 'K', 's', 'S', 'a', 'ka', 'sk', '\\b', '[a-z]*', 'a+', '.');
    const text = fc
      .array(fc.constantFrom('k', 'K', 'K', 's', 'S', 'ſ', 'a', 'A', ' ', 'é'), { maxLength: 12 })
      .map((c) => c.join(''));
    const options = { caseSensitive: false, matchWholeWords: true };
    fc.assert(
      fc.property(
        fc.array(token, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('', 'i', 'iu', 'u'),
        text,
        (tokens, flags, sample) => {
          const key = compileKey(`/${tokens.join('')}/${flags}`);
          if (key.kind !== 'regex') return;
          expect(keyMatches(key, new Haystack(sample), options)).toBe(key.regex.test(sample));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('a key holding a newline is checked on the whole appended text (it may straddle the joiner)', () => {
    const key = compileKey('end\n\x01start');
    const options = { caseSensitive: false, matchWholeWords: true };
    const base = new Haystack('the end');
    expect(keyMatches(key, base, options)).toBe(false);
    const hay = new Haystack(`the end${JOINER}start here`, { base, tail: 'start here' });
    expect(keyMatchesAfterMiss(key, hay, options)).toBe(true);
    // A regex key is always run on the whole text.
    expect(keyMatchesAfterMiss(compileKey('/end\\s+.start/'), hay, options)).toBe(true);
  });

  it('the scan buffer builds each recursion pass text on the previous one of the same shape', () => {
    const buffer = new ScanBuffer(['newest', 'older'], 2, {}, ['inject']);
    const initial = buffer.get(null, 0, false);
    expect(initial.base).toBeNull();
    buffer.addRecurse('first lore');
    const second = buffer.get(null, 0, false);
    expect(second.base).toBe(initial);
    expect(second.raw).toBe(`${initial.raw}${JOINER}first lore`);
    expect(second.tail?.raw).toBe('first lore');
    buffer.addRecurse('second lore');
    const third = buffer.get(null, 0, false);
    expect(third.base).toBe(second);
    expect(third.raw).toBe(`${second.raw}${JOINER}second lore`);
    // A shape not asked for in the previous pass is built whole (no base).
    const deeper = buffer.get(1, 0, false);
    expect(deeper.base).toBeNull();
    expect(deeper.raw).toBe(`\x01newest${JOINER}inject${JOINER}first lore${JOINER}second lore`);
    // A min-activations pass scans without the recursion buffer.
    expect(buffer.get(null, 0, true).raw).toBe(initial.raw);
  });

  it('recursion activates through text added in later passes exactly as a whole-text scan would', () => {
    const entries = [
      stEntry(1, { key: ['alpha'], content: 'mentions beta gamma' }),
      stEntry(2, { key: ['beta gamma'], content: 'mentions Delta' }),
      stEntry(3, { key: ['delta'], content: 'mentions epsilon' }),
      stEntry(4, { key: ['epsilon'], content: 'end' }),
      stEntry(5, { key: ['zeta'], content: 'never' }),
    ];
    const activation = run({
      books: [book('b', entries)],
      messages: msgs('alpha is here'),
      settings: { recursive: true, matchWholeWords: true, maxRecursionSteps: 0 },
    });
    expect(uids(activation).sort()).toEqual([1, 2, 3, 4]);
    expect(activation.activated.map((a) => [a.uid, a.recursionLevel])).toEqual(
      expect.arrayContaining([
        [1, 0],
        [2, 1],
        [3, 2],
        [4, 3],
      ]),
    );
  });

  it('entries of several books of one source keep order descending, then book, then uid (§d.1)', () => {
    const a = book(
      'a',
      [stEntry(3, { order: 5 }), stEntry(1, { order: 9 }), stEntry(2, { order: 5 })].map((e) => ({
        ...e,
        constant: true,
      })),
      'global',
    );
    const b = book(
      'b',
      [stEntry(7, { order: 5 }), stEntry(6, { order: 9 })].map((e) => ({ ...e, constant: true })),
      'global',
    );
    const first = run({ books: [a, b] });
    expect(first.activated.map((x) => `${x.bookId}.${x.uid}`)).toEqual(['a.1', 'b.6', 'a.2', 'a.3', 'b.7']);
    // Same books again (the remembered order is reused): same result.
    expect(run({ books: [a, b] }).activated.map((x) => `${x.bookId}.${x.uid}`)).toEqual(
      first.activated.map((x) => `${x.bookId}.${x.uid}`),
    );
  });

  it('only the newest 1000 messages are scanned, but the chat length counts them all', () => {
    const history = Array.from({ length: 1200 }, (_, i) => ({ text: i === 0 ? 'oldest dragon' : `m${i}` }));
    const entries = [
      stEntry(1, { key: ['dragon'], content: 'never: too old to scan' }),
      stEntry(2, { key: ['m1199'], content: 'delayed', delay: 1200 }),
      stEntry(3, { key: ['m1199'], content: 'delayed too long', delay: 1201 }),
      stEntry(4, { key: ['m200'], content: 'at depth 1000' }),
    ];
    const activation = run({ books: [book('b', entries)], messages: history, settings: { scanDepth: 1000 } });
    expect(uids(activation).sort()).toEqual([2, 4]);
  });

  it('a remembered content token count gives the same budget cut as counting afresh', () => {
    const entries = [1, 2, 3, 4].map((uid) =>
      stEntry(uid, { constant: true, content: 'x'.repeat(30), order: 10 - uid }),
    );
    const input = {
      books: [book('b', entries)],
      maxPromptTokens: 100,
      settings: { budgetPercent: 100 },
    };
    const first = run(input);
    const second = run(input);
    expect(uids(first)).toEqual([1, 2, 3]);
    expect(uids(second)).toEqual(uids(first));
    expect(second.budget).toEqual(first.budget);
  });
});
