import { newId } from './ids';

describe('newId', () => {
  it('carries the prefix and a 26-character body', () => {
    expect(newId('prj')).toMatch(/^prj_[0-9a-z]{26}$/);
  });

  it('sorts in creation order, even within one millisecond', () => {
    const ids = Array.from({ length: 2000 }, () => newId('evt'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
