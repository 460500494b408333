import { queryBoolean } from './query-boolean';

describe('queryBoolean', () => {
  it('reads true/1 and false/0, and leaves anything else for the validator to refuse', () => {
    expect(['true', '1', 'false', '0'].map((value) => queryBoolean({ value }))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    for (const value of ['yes', 'TRUE', '', '2', undefined, ['true']])
      expect(queryBoolean({ value })).toBe(value);
  });
});
