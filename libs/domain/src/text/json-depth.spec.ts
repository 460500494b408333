import { JSON_MAX_DEPTH, jsonNestedDeeperThan } from './json-depth';

const arrays = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
const objects = (levels: number): unknown => JSON.parse('{"a":'.repeat(levels) + '1' + '}'.repeat(levels));

describe('jsonNestedDeeperThan', () => {
  it('counts the value itself as level 1; scalars have no depth', () => {
    for (const scalar of [null, 1, 'x', true, undefined]) expect(jsonNestedDeeperThan(scalar, 0)).toBe(false);
    expect(jsonNestedDeeperThan({}, 1)).toBe(false);
    expect(jsonNestedDeeperThan({}, 0)).toBe(true);
    expect(jsonNestedDeeperThan({ a: [1, 'x', null] }, 2)).toBe(false);
    expect(jsonNestedDeeperThan({ a: [1, 'x', {}] }, 2)).toBe(true);
  });

  it.each([
    ['arrays', arrays],
    ['objects', objects],
  ])('takes %s exactly at the limit and refuses one level more', (_label, nest) => {
    expect(jsonNestedDeeperThan(nest(JSON_MAX_DEPTH))).toBe(false);
    expect(jsonNestedDeeperThan(nest(JSON_MAX_DEPTH + 1))).toBe(true);
  });

  it('finds a deep branch beside shallow ones, in arrays and objects', () => {
    const deep = { wide: Array.from({ length: 1000 }, () => ({ x: [1] })), tail: [{ b: arrays(10) }] };
    expect(jsonNestedDeeperThan(deep, 13)).toBe(false);
    expect(jsonNestedDeeperThan(deep, 12)).toBe(true);
  });

  it('walks 100,000 levels without recursion', () => {
    expect(jsonNestedDeeperThan(arrays(100_000))).toBe(true);
    expect(jsonNestedDeeperThan(objects(100_000))).toBe(true);
  });
});
