import {
  firstBadStringPath,
  isUnstorableText,
  STORABLE_TEXT,
  toStorableJson,
  toStorableText,
} from './storable-text';

describe('storable text', () => {
  const clean = ['', 'plain', 'emoji 👋 pair', '\ufffd'];
  const bad = ['a\u0000b', '\ud800', 'x\udfffy', 'end\ud83d', '\ude00start'];

  it('tells text Postgres can store from text it cannot, the same way in both rules', () => {
    for (const text of clean)
      expect([isUnstorableText(text), STORABLE_TEXT.test(text)]).toEqual([false, true]);
    for (const text of bad) expect([isUnstorableText(text), STORABLE_TEXT.test(text)]).toEqual([true, false]);
  });

  it('replaces NUL and each unpaired surrogate with U+FFFD and keeps pairs', () => {
    for (const text of clean) expect(toStorableText(text)).toBe(text);
    expect(toStorableText('a\u0000b\u0000')).toBe('a\ufffdb\ufffd');
    expect(toStorableText('x\udfffy \ud83d\ude00 \ud83d')).toBe('x\ufffdy \ud83d\ude00 \ufffd');
    expect(toStorableText('\ude00\ud83d')).toBe('\ufffd\ufffd');
    for (const text of bad) expect(isUnstorableText(toStorableText(text))).toBe(false);
  });

  it('names the first bad string of a JSON value, keys included', () => {
    expect(firstBadStringPath({ a: ['ok', 'b\u0000'] }, '$', isUnstorableText)).toBe('$.a[1]');
    expect(firstBadStringPath({ ['k\ud800']: 1 }, '$', isUnstorableText)).toBe('$');
    expect(firstBadStringPath({ a: [1, { b: 'fine' }] }, '$', isUnstorableText)).toBeNull();
  });
});

describe('toStorableJson', () => {
  it('returns a clean value itself and repairs strings and keys of a dirty one in a copy', () => {
    const clean = { a: ['x', 1, null, { b: 'emoji 👋' }] };
    expect(toStorableJson(clean)).toBe(clean);
    const dirty = { 'k\u0000': ['ok', { deep: 'half \ud83d' }], n: 2, t: true };
    const repaired = toStorableJson(dirty);
    expect(repaired).toEqual({ 'k\ufffd': ['ok', { deep: 'half \ufffd' }], n: 2, t: true });
    expect(dirty['k\u0000'][1]).toEqual({ deep: 'half \ud83d' });
    expect(toStorableJson('a\u0000')).toBe('a\ufffd');
  });
});
