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

describe('newId random pool', () => {
  it('keeps the format and uniqueness across many pool refills', () => {
    // 4096-byte pool, 16 bytes per id: 20,000 ids refill it about 80 times.
    const ids = Array.from({ length: 20_000 }, () => newId('dout'));
    for (const id of ids) expect(id).toMatch(/^dout_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('draws every random digit uniformly enough (each of 32 digits appears)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) for (const c of newId('x').slice(12)) seen.add(c);
    expect(seen.size).toBe(32);
  });
});
