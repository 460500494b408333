import { createSeededRandom } from '../shared/seeded-random';
import { getStringHash, isFalseBoolean, parseDice, rollDice, seedrandom, splitLegacyList } from './st-compat';

describe('ST compatibility helpers', () => {
  // ST utils.js getStringHash is cyrb53; the published vectors of cyrb53.
  it.each([
    ['a', 7929297801672961],
    ['b', 8684336938537663],
    ['revenge', 4051478007546757],
    ['revenue', 8309097637345594],
  ])('getStringHash(%j) = %d (cyrb53)', (input, expected) => {
    expect(getStringHash(input)).toBe(expected);
  });

  it('seedrandom matches davidbau/seedrandom ARC4 (published vector for "hello.")', () => {
    expect(seedrandom('hello.')()).toBe(0.9282578795792454);
  });

  it('seedrandom with a number seed flattens to String(n) + NUL, as seedrandom does', () => {
    const a = seedrandom(42);
    const b = seedrandom('42\0');
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
    expect(seedrandom(42)()).not.toBe(seedrandom('42')());
  });

  it.each([
    ['false', true],
    [' OFF ', true],
    ['0', true],
    ['no', false],
    ['', false],
    ['true', false],
  ])('isFalseBoolean(%j) = %s (utils.js)', (value, expected) => {
    expect(isFalseBoolean(value)).toBe(expected);
  });

  // droll grammar used by {{roll}} (§g: "dice, droll syntax; a bare number N means 1dN; invalid → ''")
  it.each([
    ['1d20', { numDice: 1, numSides: 20, modifier: 0 }],
    ['d6', { numDice: 1, numSides: 6, modifier: 0 }],
    ['3d6+4', { numDice: 3, numSides: 6, modifier: 4 }],
    ['2D10-1', { numDice: 2, numSides: 10, modifier: -1 }],
    ['0d6', null],
    ['1d0', null],
    ['20', null],
    ['1d6+', null],
    ['abc', null],
  ])('parseDice(%j)', (formula, expected) => {
    expect(parseDice(formula)).toEqual(expected);
  });

  it('rollDice stays within [min, max] and is reproducible for a seed', () => {
    const dice = parseDice('3d6+4')!;
    const r1 = createSeededRandom('seed');
    const r2 = createSeededRandom('seed');
    for (let i = 0; i < 200; i++) {
      const total = rollDice(dice, r1);
      expect(total).toBeGreaterThanOrEqual(7);
      expect(total).toBeLessThanOrEqual(22);
      expect(rollDice(dice, r2)).toBe(total);
    }
  });

  it.each([
    ['a::b::c', true, ['a', 'b', 'c']],
    [' a :: b ', true, ['a', 'b']],
    [' a :: b ', false, [' a ', ' b ']],
    ['a, b ,c', false, ['a', 'b', 'c']],
    ['x\\,y, z', false, ['x,y', 'z']],
  ])('splitLegacyList(%j, trim=%s)', (input, trim, expected) => {
    expect(splitLegacyList(input, trim)).toEqual(expected);
  });
});
