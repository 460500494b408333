import { operationLogsRepository } from '@hearth/persistence';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { createUserCard, type UserCardJson } from '../support/factories/user-cards';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Spec 3 "User cards": create, read, list (filters, sort, paging), PATCH with `revision`
 * compare-and-set, soft delete, names unique per account among live cards, operation logs, and other
 * accounts answering 404 `not_found`. The batch routes are in user-cards-batch.test.ts.
 */
describe('User cards', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other' });
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, key = owner.apiKey) =>
    t.http
      .post('/users')
      .set('x-api-key', key)
      .send(body as object);
  const get = (id: string, key = owner.apiKey) => t.http.get(`/users/${id}`).set('x-api-key', key);
  const patch = (id: string, body: unknown, key = owner.apiKey) =>
    t.http
      .patch(`/users/${id}`)
      .set('x-api-key', key)
      .send(body as object);
  const del = (id: string, body?: unknown, key = owner.apiKey) => {
    const req = t.http.delete(`/users/${id}`).set('x-api-key', key);
    return body === undefined ? req : req.send(body as object);
  };
  const list = (query: string, key = owner.apiKey) => t.http.get(`/users?${query}`).set('x-api-key', key);
  const logsOf = (accountId: string, targetId: string) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId, filters: { target_id: targetId } },
      { limit: 1000, offset: 0, sortOrder: 'asc' },
    );
  const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((c) => c.id);
  const expectError = (
    res: { status: number; body: { error?: { code: string } } },
    status: number,
    code: string,
  ) => expect([res.status, res.body.error?.code]).toEqual([status, code]);

  describe('create and read', () => {
    it('creates an active card at revision 1 in {data}, readable by GET and the list', async () => {
      const snapshot = { name: 'Aria', description: 'A {{user}} persona', extra: { nested: [1, 'two'] } };
      const res = await post({ snapshot });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(/^usr_/),
          name: 'Aria',
          status: 'active',
          snapshot,
          revision: 1,
          created_at: expect.any(Number),
          updated_at: res.body.data.created_at,
        },
      });
      expect((await get(res.body.data.id)).body).toEqual(res.body);
      const listed = await list('keyword=aria');
      expect(listed.body.data).toContainEqual(res.body.data);

      const [log] = await logsOf(owner.accountId, res.body.data.id);
      expect(log).toMatchObject({
        action: 'create_user_card',
        target_type: 'user_card',
        before_ref: null,
        after_ref: { id: res.body.data.id, name: 'Aria', status: 'active', revision: 1 },
      });
      expect(JSON.stringify(log)).not.toContain('persona');
    });

    it('takes a 200-character name and a snapshot of exactly 256 KiB', async () => {
      expect((await post({ snapshot: { name: 'n'.repeat(200) } })).status).toBe(201);
      const envelope = JSON.stringify({ name: 'big', description: '' });
      const exact = 'd'.repeat(256 * 1024 - Buffer.byteLength(envelope));
      const fits = await post({ snapshot: { name: 'big', description: exact } });
      expect(fits.status).toBe(201);
      const over = await post({ snapshot: { name: 'big2', description: `${exact}d` } });
      expectError(over, 400, 'validation_error');
      expect(over.body.error.details.fields[0].field).toBe('snapshot');
    });

    it.each([
      [{}, 'snapshot'],
      [{ snapshot: [] }, 'snapshot'],
      [{ snapshot: 'Aria' }, 'snapshot'],
      [{ snapshot: null }, 'snapshot'],
      [{ snapshot: {} }, 'snapshot.name'],
      [{ snapshot: { name: '' } }, 'snapshot.name'],
      [{ snapshot: { name: '   ' } }, 'snapshot.name'],
      [{ snapshot: { name: 42 } }, 'snapshot.name'],
      [{ snapshot: { name: 'n'.repeat(201) } }, 'snapshot.name'],
      [{ snapshot: { name: 'a\u0000b' } }, 'snapshot.name'],
      [{ snapshot: { name: 'Ok', description: 7 } }, 'snapshot.description'],
      [{ snapshot: { name: 'Ok', note: 'a\u0000b' } }, 'snapshot'],
      [{ snapshot: { name: 'Ok' }, status: 'active' }, 'status'],
    ])('refuses %j with 400 validation_error naming %s, storing nothing', async (body, field) => {
      const before = await list('include_deleted=true&limit=200');
      const res = await post(body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect((await list('include_deleted=true&limit=200')).body.meta.total).toBe(before.body.meta.total);
    });

    it('refuses malformed JSON with 400 validation_error', async () => {
      const res = await t.http
        .post('/users')
        .set('x-api-key', owner.apiKey)
        .set('content-type', 'application/json')
        .send('{"snapshot": {');
      expectError(res, 400, 'validation_error');
    });
  });

  describe('names', () => {
    it('keeps names unique per account (409 user_conflict), other accounts are independent', async () => {
      await createUserCard(t, owner.apiKey, { name: 'Twin' });
      const res = await post({ snapshot: { name: 'Twin' } });
      expectError(res, 409, 'user_conflict');
      expect(res.body.error.details).toEqual({ name: 'Twin' });
      expect((await post({ snapshot: { name: 'Twin' } }, other.apiKey)).status).toBe(201);
    });

    it('gives one name to exactly one of 10 concurrent creates', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => post({ snapshot: { name: 'Raced', i } })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'user_conflict');
      expect((await list('keyword=Raced')).body.meta.total).toBe(1);
    });

    it('frees the name of a deleted card', async () => {
      const card = await createUserCard(t, owner.apiKey, { name: 'Phoenix' });
      expect((await del(card.id)).status).toBe(200);
      const again = await post({ snapshot: { name: 'Phoenix' } });
      expect(again.status).toBe(201);
      expect(again.body.data.id).not.toBe(card.id);
    });

    it('refuses a rename onto a live name with 409 user_conflict and changes nothing', async () => {
      await createUserCard(t, owner.apiKey, { name: 'Taken' });
      const card = await createUserCard(t, owner.apiKey, { name: 'Free' });
      const res = await patch(card.id, { snapshot: { name: 'Taken' } });
      expectError(res, 409, 'user_conflict');
      expect((await get(card.id)).body.data).toEqual(card);
    });
  });

  describe('PATCH', () => {
    it('replaces the snapshot, renames, sets the status and bumps the revision once per change', async () => {
      const card = await createUserCard(t, owner.apiKey, { name: 'Before', description: 'old' });
      const first = await patch(card.id, { snapshot: { name: 'After', mood: 'calm' } });
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({
        id: card.id,
        name: 'After',
        snapshot: { name: 'After', mood: 'calm' },
        status: 'active',
        revision: 2,
        created_at: card.created_at,
      });
      expect(first.body.data.updated_at).toBeGreaterThanOrEqual(card.updated_at);
      const second = await patch(card.id, { status: 'disabled', expected_revision: 2 });
      expect(second.body.data).toMatchObject({ status: 'disabled', revision: 3, name: 'After' });
      const third = await patch(card.id, { status: 'active', snapshot: { name: 'After', mood: 'warm' } });
      expect(third.body.data).toMatchObject({ status: 'active', revision: 4, snapshot: { mood: 'warm' } });
      expect((await get(card.id)).body.data).toEqual(third.body.data);

      const logs = await logsOf(owner.accountId, card.id);
      expect(logs.map((l) => l.action)).toEqual([
        'create_user_card',
        'update_user_card',
        'update_user_card',
        'update_user_card',
      ]);
      expect(logs[1]).toMatchObject({
        before_ref: { name: 'Before', revision: 1 },
        after_ref: { name: 'After', revision: 2 },
        metadata: { snapshot_changed: true },
      });
      expect(JSON.stringify(logs)).not.toContain('calm');
    });

    it('writes nothing for a PATCH that changes nothing (same revision, no log)', async () => {
      const card = await createUserCard(t, owner.apiKey, { name: 'Still', a: 1, b: 2 });
      const res = await patch(card.id, { snapshot: { b: 2, a: 1, name: 'Still' }, status: 'active' });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(card);
      expect((await logsOf(owner.accountId, card.id)).map((l) => l.action)).toEqual(['create_user_card']);
    });

    it('answers 409 user_revision_conflict for a stale expected_revision and keeps the card', async () => {
      const card = await createUserCard(t, owner.apiKey);
      await patch(card.id, { status: 'disabled' });
      const res = await patch(card.id, { status: 'active', expected_revision: 1 });
      expectError(res, 409, 'user_revision_conflict');
      expect(res.body.error.details).toEqual({ expected_revision: 1, current_revision: 2 });
      expect((await get(card.id)).body.data).toMatchObject({ status: 'disabled', revision: 2 });
      // a stale revision is a conflict even when the PATCH would change nothing
      expectError(
        await patch(card.id, { status: 'disabled', expected_revision: 1 }),
        409,
        'user_revision_conflict',
      );
    });

    it.each([
      [{}, 'snapshot|status'],
      [{ expected_revision: 1 }, 'snapshot|status'],
      [{ status: 'deleted' }, 'status'],
      [{ status: 'archived' }, 'status'],
      [{ snapshot: [] }, 'snapshot'],
      [{ snapshot: { description: 'no name' } }, 'snapshot.name'],
      [{ status: 'active', expected_revision: 0 }, 'expected_revision'],
      [{ status: 'active', expected_revision: 1.5 }, 'expected_revision'],
      [{ status: 'active', expected_revision: '1' }, 'expected_revision'],
      [{ status: 'active', name: 'x' }, 'name'],
    ])('refuses %j with 400 validation_error naming %s', async (body, field) => {
      const card = await createUserCard(t, owner.apiKey);
      const res = await patch(card.id, body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect((await get(card.id)).body.data).toEqual(card);
    });

    it.each([
      [{ status: null }, 'status'],
      [{ snapshot: null }, 'snapshot'],
      [{ status: null, expected_revision: 1 }, 'status'],
      [{ status: null, snapshot: { name: 'Renamed' } }, 'status'],
      [{ status: 'disabled', snapshot: null }, 'snapshot'],
    ])('refuses null in %j with 400 validation_error naming %s, writing nothing', async (body, field) => {
      const card = await createUserCard(t, owner.apiKey);
      const res = await patch(card.id, body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
      expect((await get(card.id)).body.data).toEqual(card);
      expect((await logsOf(owner.accountId, card.id)).map((l) => l.action)).toEqual(['create_user_card']);
    });

    it('gives exactly one of 20 concurrent PATCHes with the same expected_revision; the winner is stored', async () => {
      const card = await createUserCard(t, owner.apiKey, { name: 'Contended' });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          patch(card.id, { snapshot: { name: `Contender ${i}`, i }, expected_revision: card.revision }),
        ),
      );
      const winners = results.filter((r) => r.status === 200);
      expect(winners).toHaveLength(1);
      const losers = results.filter((r) => r.status !== 200);
      expect(losers).toHaveLength(19);
      for (const r of losers) {
        expectError(r, 409, 'user_revision_conflict');
        expect(r.body.error.details).toEqual({ expected_revision: 1, current_revision: 2 });
      }
      const stored = (await get(card.id)).body.data;
      expect(stored).toEqual(winners[0].body.data);
      expect(stored.revision).toBe(2);
      expect(stored.snapshot).toEqual({ name: stored.name, i: Number(stored.name.split(' ')[1]) });
      expect(
        (await logsOf(owner.accountId, card.id)).filter((l) => l.action === 'update_user_card'),
      ).toHaveLength(1);
    });
  });

  describe('DELETE', () => {
    it('soft-deletes: 200 {id, deleted, revision}, then 404 not_found on every route', async () => {
      const card = await createUserCard(t, owner.apiKey, { name: 'Gone soon' });
      const res = await del(card.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { id: card.id, deleted: true, revision: 2 } });
      expectError(await get(card.id), 404, 'not_found');
      expectError(await patch(card.id, { status: 'disabled' }), 404, 'not_found');
      expectError(await del(card.id), 404, 'not_found');
      expect((await list('keyword=Gone%20soon')).body.data).toEqual([]);
      const withDeleted = await list('keyword=Gone%20soon&include_deleted=true');
      expect(withDeleted.body.data).toEqual([
        { ...card, status: 'deleted', revision: 2, updated_at: expect.any(Number) },
      ]);
      const logs = await logsOf(owner.accountId, card.id);
      expect(logs.map((l) => l.action)).toEqual(['create_user_card', 'delete_user_card']);
      expect(logs[1]).toMatchObject({
        before_ref: { status: 'active', revision: 1 },
        after_ref: { status: 'deleted', revision: 2 },
      });
    });

    it('checks expected_revision when given (409 user_revision_conflict, nothing deleted)', async () => {
      const card = await createUserCard(t, owner.apiKey);
      await patch(card.id, { status: 'disabled' });
      const stale = await del(card.id, { expected_revision: 1 });
      expectError(stale, 409, 'user_revision_conflict');
      expect((await get(card.id)).status).toBe(200);
      const ok = await del(card.id, { expected_revision: 2 });
      expect(ok.body.data).toEqual({ id: card.id, deleted: true, revision: 3 });
    });

    it('refuses a bad body with 400 validation_error', async () => {
      const card = await createUserCard(t, owner.apiKey);
      expectError(await del(card.id, { expected_revision: 'one' }), 400, 'validation_error');
      expectError(await del(card.id, { force: true }), 400, 'validation_error');
      expect((await get(card.id)).status).toBe(200);
    });
  });

  describe('GET /users', () => {
    let lister: Caller;
    const cards: UserCardJson[] = [];

    beforeAll(async () => {
      lister = await createAccountCaller(t, { name: 'Lister' });
      for (const [name, description] of [
        ['Charlie', 'likes tea'],
        ['Alpha', 'Tea drinker'],
        ['Bravo', 'coffee 100%'],
        ['Delta', null],
      ] as const) {
        cards.push(await createUserCard(t, lister.apiKey, { name, description }));
      }
      await patch(cards[2].id, { status: 'disabled' }, lister.apiKey); // Bravo: updated last
      await del(cards[3].id, undefined, lister.apiKey); // delta: deleted
    });

    it('lists live cards by updated_at desc by default, with meta', async () => {
      const res = await list('', lister.apiKey);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([cards[2].id, cards[1].id, cards[0].id]);
      expect(res.body.meta).toEqual({
        total: 3,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'updated_at',
        sort_order: 'desc',
      });
    });

    it('filters by status and include_deleted', async () => {
      expect(ids(await list('status=disabled', lister.apiKey))).toEqual([cards[2].id]);
      expect(ids(await list('status=active&sort_by=created_at&sort_order=asc', lister.apiKey))).toEqual([
        cards[0].id,
        cards[1].id,
      ]);
      expect(ids(await list('status=deleted', lister.apiKey))).toEqual([cards[3].id]);
      expect((await list('include_deleted=true', lister.apiKey)).body.meta.total).toBe(4);
      expect((await list('include_deleted=false', lister.apiKey)).body.meta.total).toBe(3);
    });

    it('searches the name and description case-insensitively, wildcards taken literally', async () => {
      expect(ids(await list('keyword=TEA&sort_by=name&sort_order=asc', lister.apiKey))).toEqual([
        cards[1].id,
        cards[0].id,
      ]);
      expect(ids(await list('keyword=ALPH', lister.apiKey))).toEqual([cards[1].id]);
      expect(ids(await list(`keyword=${encodeURIComponent('100%')}`, lister.apiKey))).toEqual([cards[2].id]);
      expect(ids(await list(`keyword=${encodeURIComponent('%')}`, lister.apiKey))).toEqual([cards[2].id]);
      expect(ids(await list('keyword=_', lister.apiKey))).toEqual([]);
    });

    it('sorts by name and created_at both ways', async () => {
      const byName = await list('sort_by=name&sort_order=asc', lister.apiKey);
      expect(byName.body.data.map((c: UserCardJson) => c.name)).toEqual(['Alpha', 'Bravo', 'Charlie']);
      expect(byName.body.meta).toMatchObject({ sort_by: 'name', sort_order: 'asc' });
      expect(ids(await list('sort_by=created_at', lister.apiKey))).toEqual([
        cards[2].id,
        cards[1].id,
        cards[0].id,
      ]);
    });

    it('pages with limit and offset', async () => {
      const first = await list('limit=2&sort_by=created_at&sort_order=asc', lister.apiKey);
      expect(ids(first)).toEqual([cards[0].id, cards[1].id]);
      expect(first.body.meta).toMatchObject({ total: 3, limit: 2, offset: 0, has_more: true });
      const second = await list('limit=2&offset=2&sort_by=created_at&sort_order=asc', lister.apiKey);
      expect(ids(second)).toEqual([cards[2].id]);
      expect(second.body.meta).toMatchObject({ total: 3, limit: 2, offset: 2, has_more: false });
      expect((await list('limit=200', lister.apiKey)).body.meta.limit).toBe(200);
    });

    it('pages 50 by default: 51 cards give a full page of 50 with has_more, then the last one', async () => {
      const many = await createAccountCaller(t, { name: 'Many cards' });
      for (let i = 0; i < 51; i++) await createUserCard(t, many.apiKey, { name: `Card ${i}` });
      const all = ids(await list('limit=200', many.apiKey));
      expect(all).toHaveLength(51);
      const first = await list('', many.apiKey);
      expect(ids(first)).toEqual(all.slice(0, 50));
      expect(first.body.meta).toMatchObject({ total: 51, limit: 50, offset: 0, has_more: true });
      const second = await list('offset=50', many.apiKey);
      expect(ids(second)).toEqual([all[50]]);
      expect(second.body.meta).toMatchObject({ total: 51, limit: 50, offset: 50, has_more: false });
    });

    it.each([
      'limit=201',
      'limit=0',
      'limit=abc',
      'offset=-1',
      'status=gone',
      'include_deleted=yes',
      'sort_by=revision',
      'sort_order=up',
      'keyword=',
      'unknown=1',
    ])('refuses ?%s with 400 validation_error', async (query) => {
      expectError(await list(query, lister.apiKey), 400, 'validation_error');
    });
  });

  describe('access', () => {
    it("answers 404 not_found for another account's card on every route and leaves it unchanged", async () => {
      const card = await createUserCard(t, other.apiKey, { name: 'Private' });
      expectError(await get(card.id), 404, 'not_found');
      expectError(await patch(card.id, { status: 'disabled' }), 404, 'not_found');
      expectError(
        await patch(card.id, { snapshot: { name: 'Stolen' }, expected_revision: 1 }),
        404,
        'not_found',
      );
      expectError(await del(card.id), 404, 'not_found');
      expectError(await del(card.id, { expected_revision: 1 }), 404, 'not_found');
      const owners = await list('include_deleted=true&limit=200');
      expect(ids(owners)).not.toContain(card.id);
      expect((await get(card.id, other.apiKey)).body.data).toEqual(card);
      expect((await logsOf(other.accountId, card.id)).map((l) => l.action)).toEqual(['create_user_card']);
    });

    it("lets every Client of the account read and write the account's cards", async () => {
      const side = await createClientCaller(t, owner.accountId, 'Side');
      const card = await createUserCard(t, owner.apiKey);
      expect((await get(card.id, side.apiKey)).status).toBe(200);
      expect((await patch(card.id, { status: 'disabled' }, side.apiKey)).body.data.revision).toBe(2);
      const made = await post({ snapshot: { name: 'From side client' } }, side.apiKey);
      expect(made.status).toBe(201);
      expect((await get(made.body.data.id)).status).toBe(200);
    });

    it('answers 401 without a key', async () => {
      expectError(await t.http.get('/users'), 401, 'unauthorized');
    });
  });
});
