import { DomainError } from '@hearth/domain';
import type { UserCardRow } from '@hearth/persistence';
import {
  checkUserCardSnapshot,
  requireUserCardRevision,
  USER_CARD_NAME_MAX_CHARS,
  USER_CARD_SNAPSHOT_MAX_BYTES,
} from './user-card-rules';

function errorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

const fieldOf = (fn: () => unknown) => {
  const error = errorOf(fn);
  expect([error.status, error.code]).toEqual([400, 'validation_error']);
  return (error.details as { fields: Array<{ field: string }> }).fields[0].field;
};

describe('checkUserCardSnapshot', () => {
  it('keeps every field and serialises the snapshot', () => {
    const snapshot = { name: 'Aria', description: '{{user}}', extra: { list: [1, null, true] } };
    const checked = checkUserCardSnapshot(snapshot);
    expect(checked.name).toBe('Aria');
    expect(checked.value).toBe(snapshot);
    expect(JSON.parse(checked.json)).toEqual(snapshot);
  });

  it('counts the name in code points, up to 200', () => {
    expect(checkUserCardSnapshot({ name: '😀'.repeat(USER_CARD_NAME_MAX_CHARS) }).name).toHaveLength(400);
    expect(fieldOf(() => checkUserCardSnapshot({ name: '😀'.repeat(USER_CARD_NAME_MAX_CHARS + 1) }))).toBe(
      'snapshot.name',
    );
  });

  it.each([
    [null, 'snapshot'],
    [[{ name: 'a' }], 'snapshot'],
    ['Aria', 'snapshot'],
    [{}, 'snapshot.name'],
    [{ name: '' }, 'snapshot.name'],
    [{ name: '\t\n ' }, 'snapshot.name'],
    [{ name: ['Aria'] }, 'snapshot.name'],
    [{ name: 'A\u0000' }, 'snapshot.name'],
    [{ name: 'Aria', description: { text: 'x' } }, 'snapshot.description'],
    [{ name: 'Aria', score: Number.POSITIVE_INFINITY }, 'snapshot'],
  ])('refuses %j naming %s', (snapshot, field) => {
    expect(fieldOf(() => checkUserCardSnapshot(snapshot))).toBe(field);
  });

  it('accepts a null description and refuses a snapshot one byte over the limit', () => {
    expect(checkUserCardSnapshot({ name: 'Aria', description: null }).name).toBe('Aria');
    const base = Buffer.byteLength(JSON.stringify({ name: 'A', d: '' }));
    const fits = { name: 'A', d: 'x'.repeat(USER_CARD_SNAPSHOT_MAX_BYTES - base) };
    expect(Buffer.byteLength(checkUserCardSnapshot(fits).json)).toBe(USER_CARD_SNAPSHOT_MAX_BYTES);
    expect(fieldOf(() => checkUserCardSnapshot({ ...fits, d: `${fits.d}x` }))).toBe('snapshot');
  });
});

describe('requireUserCardRevision', () => {
  const card = { revision: 3 } as UserCardRow;

  it('passes without an expected revision or with the current one', () => {
    expect(() => requireUserCardRevision(card, undefined)).not.toThrow();
    expect(() => requireUserCardRevision(card, null)).not.toThrow();
    expect(() => requireUserCardRevision(card, 3)).not.toThrow();
  });

  it('answers 409 user_revision_conflict with both revisions otherwise', () => {
    for (const expected of [2, 4]) {
      const error = errorOf(() => requireUserCardRevision(card, expected));
      expect([error.status, error.code, error.details]).toEqual([
        409,
        'user_revision_conflict',
        { expected_revision: expected, current_revision: 3 },
      ]);
    }
  });
});
