import { DomainError } from '../errors';
import { cursorPage, decodeCursor, encodeCursor, MAX_CURSOR_LENGTH, offsetMeta } from './paging.rules';

const projects = { list: 'projects', params: { status: 'active', role: undefined } };

function expectInvalid(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('invalid_cursor');
    expect((error as DomainError).status).toBe(400);
    return;
  }
  throw new Error('expected invalid_cursor');
}

describe('cursors', () => {
  it('round-trips the key of the list that issued it', () => {
    const cursor = encodeCursor(projects, ['prj_1', 42]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, projects, ['string', 'number'])).toEqual(['prj_1', 42]);
  });

  it('ignores the order of params and absent params', () => {
    const a = encodeCursor({ list: 'x', params: { b: 1, a: 'z', c: undefined } }, ['k']);
    expect(decodeCursor(a, { list: 'x', params: { a: 'z', b: 1 } }, ['string'])).toEqual(['k']);
  });

  it('rejects a cursor of another list or with other filters (foreign)', () => {
    const cursor = encodeCursor(projects, ['prj_1']);
    expectInvalid(() =>
      decodeCursor(cursor, { list: 'project_sessions', params: { project_id: 'prj_1' } }, ['string']),
    );
    expectInvalid(() =>
      decodeCursor(cursor, { list: 'projects', params: { status: 'archived' } }, ['string']),
    );
    const sessions = encodeCursor({ list: 'project_sessions', params: { project_id: 'prj_a' } }, ['ses_1']);
    expectInvalid(() =>
      decodeCursor(sessions, { list: 'project_sessions', params: { project_id: 'prj_b' } }, ['string']),
    );
  });

  it('rejects malformed cursors', () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const good = JSON.parse(Buffer.from(encodeCursor(projects, ['prj_1']), 'base64url').toString()) as {
      s: string;
    };
    for (const bad of [
      '',
      'not a cursor!',
      'x'.repeat(MAX_CURSOR_LENGTH + 1),
      Buffer.from('{broken').toString('base64url'),
      b64([1, 2]),
      b64('string'),
      b64({ v: 2, s: good.s, k: ['prj_1'] }),
      b64({ v: 1, s: good.s, k: 'prj_1' }),
      b64({ v: 1, s: good.s, k: [] }),
      b64({ v: 1, s: good.s, k: [5] }),
      b64({ v: 1, s: good.s, k: [''] }),
      b64({ v: 1, s: good.s, k: ['a', 'b'] }),
    ]) {
      expectInvalid(() => decodeCursor(bad, projects, ['string']));
    }
    expectInvalid(() => decodeCursor(b64({ v: 1, s: good.s, k: ['nan'] }), projects, ['number']));
  });

  it('cuts pages from limit + 1 rows', () => {
    const rows = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    const full = cursorPage(rows, 2, projects, (r) => [r.id]);
    expect(full.items).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(decodeCursor(full.next_cursor!, projects, ['string'])).toEqual(['b']);
    expect(cursorPage(rows.slice(0, 2), 2, projects, (r) => [r.id]).next_cursor).toBeNull();
    expect(cursorPage([], 2, projects, (r: { id: string }) => [r.id])).toEqual({
      items: [],
      next_cursor: null,
    });
  });
});

describe('offset meta', () => {
  it('tells whether more rows follow', () => {
    expect(offsetMeta(10, 5, 0)).toEqual({ total: 10, limit: 5, offset: 0, has_more: true });
    expect(offsetMeta(10, 5, 5)).toEqual({ total: 10, limit: 5, offset: 5, has_more: false });
    expect(offsetMeta(0, 50, 0).has_more).toBe(false);
  });
});
