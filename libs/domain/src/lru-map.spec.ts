import { LruMap } from './lru-map';

describe('LruMap', () => {
  it('keeps at most max entries and drops the least recently used first', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1); // a is now the most recent
    map.set('c', 3);
    expect(map.size).toBe(2);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
  });

  it('replaces the value of a key that is set again, without growing', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('a', 2);
    expect(map.size).toBe(1);
    expect(map.get('a')).toBe(2);
  });
});
