import { sql } from 'kysely';
import { operationLogsRepository } from '@hearth/persistence';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createUserCard, type UserCardJson } from '../support/factories/user-cards';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Spec 3 `PATCH /users/batch/status` and `POST /users/batch/delete`: 1-100 unique ids, per-id results
 * in input order, ids of other accounts and deleted cards reported `not_found` and never touched, one
 * transaction per batch, and routes that are not taken for `/users/:id`.
 */
describe('User card batches', () => {
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

  const setStatus = (body: unknown, key = owner.apiKey) =>
    t.http
      .patch('/users/batch/status')
      .set('x-api-key', key)
      .send(body as object);
  const deleteMany = (body: unknown, key = owner.apiKey) =>
    t.http
      .post('/users/batch/delete')
      .set('x-api-key', key)
      .send(body as object);
  const get = (id: string, key = owner.apiKey) => t.http.get(`/users/${id}`).set('x-api-key', key);
  const cardsOf = (caller: Caller, n: number) =>
    Promise.all(Array.from({ length: n }, () => createUserCard(t, caller.apiKey)));
  const logsOf = (accountId: string, filters: Record<string, string>) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId, filters },
      { limit: 10000, offset: 0, sortOrder: 'asc' },
    );
  const expectError = (
    res: { status: number; body: { error?: { code: string } } },
    status: number,
    code: string,
  ) => expect([res.status, res.body.error?.code]).toEqual([status, code]);

  describe('PATCH /users/batch/status', () => {
    it('updates one card', async () => {
      const [card] = await cardsOf(owner, 1);
      const res = await setStatus({ ids: [card.id], status: 'disabled' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          results: [{ index: 0, id: card.id, action: 'updated' }],
          meta: { total: 1, updated: 1, not_found: 0, status: 'disabled' },
        },
      });
      expect((await get(card.id)).body.data).toMatchObject({ status: 'disabled', revision: 2 });
    });

    it('takes 100 ids; reports missing, deleted and foreign ones as not_found without touching them', async () => {
      const mine = await cardsOf(owner, 97);
      const [deleted] = await cardsOf(owner, 1);
      await t.http.delete(`/users/${deleted.id}`).set('x-api-key', owner.apiKey).expect(200);
      const [foreign] = await cardsOf(other, 1);
      const ids = [foreign.id, ...mine.map((c) => c.id), deleted.id, 'usr_missing'];
      expect(ids).toHaveLength(100);

      const res = await setStatus({ ids, status: 'disabled' });
      expect(res.status).toBe(200);
      expect(res.body.data.results).toEqual(
        ids.map((id, index) => ({ index, id, action: index >= 1 && index <= 97 ? 'updated' : 'not_found' })),
      );
      expect(res.body.data.meta).toEqual({ total: 100, updated: 97, not_found: 3, status: 'disabled' });
      for (const card of mine.slice(0, 5)) expect((await get(card.id)).body.data.status).toBe('disabled');
      expect((await get(foreign.id, other.apiKey)).body.data).toEqual(foreign);
      const withDeleted = await t.http.get('/users?status=deleted&limit=200').set('x-api-key', owner.apiKey);
      expect(withDeleted.body.data.find((c: UserCardJson) => c.id === deleted.id).revision).toBe(2);

      const logs = (await logsOf(owner.accountId, {})).filter(
        (l) => l.action === 'batch_update_user_card_status',
      );
      const ofBatch = logs.filter((l) => mine.some((c) => c.id === l.target_id));
      expect(ofBatch).toHaveLength(97);
      expect(new Set(ofBatch.map((l) => l.operation_group_id)).size).toBe(1);
      expect(ofBatch[0]).toMatchObject({
        target_type: 'user_card',
        operation_group_id: expect.stringMatching(/^opgrp_/),
        before_ref: { status: 'active', revision: 1 },
        after_ref: { status: 'disabled', revision: 2 },
      });
      expect(await logsOf(other.accountId, { target_id: foreign.id })).toHaveLength(1);
    });

    it('reports a card already at the status as updated, without a new revision or log', async () => {
      const [card] = await cardsOf(owner, 1);
      const res = await setStatus({ ids: [card.id], status: 'active' });
      expect(res.body.data.results).toEqual([{ index: 0, id: card.id, action: 'updated' }]);
      expect((await get(card.id)).body.data).toEqual(card);
      expect((await logsOf(owner.accountId, { target_id: card.id })).map((l) => l.action)).toEqual([
        'create_user_card',
      ]);
    });

    it.each([
      ['101 ids', () => ({ ids: Array.from({ length: 101 }, (_, i) => `usr_${i}`), status: 'active' })],
      ['no ids', () => ({ ids: [], status: 'active' })],
      ['duplicate ids', () => ({ ids: ['usr_a', 'usr_b', 'usr_a'], status: 'active' })],
      ['ids not an array', () => ({ ids: 'usr_a', status: 'active' })],
      ['a non-string id', () => ({ ids: [1], status: 'active' })],
      ['an empty id', () => ({ ids: [''], status: 'active' })],
      ['no status', () => ({ ids: ['usr_a'] })],
      ['status deleted', () => ({ ids: ['usr_a'], status: 'deleted' })],
      ['an unknown field', () => ({ ids: ['usr_a'], status: 'active', expected_revision: 1 })],
    ])('refuses %s with 400 validation_error', async (_label, body) => {
      expectError(await setStatus(body()), 400, 'validation_error');
    });

    it('changes nothing when 101 ids include real ones', async () => {
      const mine = await cardsOf(owner, 3);
      const ids = [...mine.map((c) => c.id), ...Array.from({ length: 98 }, (_, i) => `usr_x${i}`)];
      expectError(await setStatus({ ids, status: 'disabled' }), 400, 'validation_error');
      for (const card of mine) expect((await get(card.id)).body.data).toEqual(card);
    });
  });

  describe('POST /users/batch/delete', () => {
    it('soft-deletes one card (200, not 201)', async () => {
      const [card] = await cardsOf(owner, 1);
      const res = await deleteMany({ ids: [card.id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          results: [{ index: 0, id: card.id, action: 'deleted' }],
          meta: { total: 1, deleted: 1, not_found: 0 },
        },
      });
      expectError(await get(card.id), 404, 'not_found');
    });

    it('takes 100 ids; deleted, foreign and unknown ones are not_found and untouched', async () => {
      const mine = await cardsOf(owner, 97);
      const [already] = await cardsOf(owner, 1);
      await deleteMany({ ids: [already.id] });
      const [foreign] = await cardsOf(other, 1);
      const ids = ['usr_missing', ...mine.map((c) => c.id), foreign.id, already.id];
      const res = await deleteMany({ ids });
      expect(res.status).toBe(200);
      expect(res.body.data.results).toEqual(
        ids.map((id, index) => ({ index, id, action: index >= 1 && index <= 97 ? 'deleted' : 'not_found' })),
      );
      expect(res.body.data.meta).toEqual({ total: 100, deleted: 97, not_found: 3 });
      for (const card of mine.slice(0, 5)) expectError(await get(card.id), 404, 'not_found');
      expect((await get(foreign.id, other.apiKey)).body.data).toEqual(foreign);
      const logs = (await logsOf(owner.accountId, {})).filter((l) => l.action === 'batch_delete_user_card');
      const ofBatch = logs.filter((l) => mine.some((c) => c.id === l.target_id));
      expect(ofBatch).toHaveLength(97);
      expect(new Set(ofBatch.map((l) => l.operation_group_id)).size).toBe(1);
      expect(ofBatch[0]).toMatchObject({ after_ref: { status: 'deleted', revision: 2 } });
      // their names are free again
      const reuse = await t.http
        .post('/users')
        .set('x-api-key', owner.apiKey)
        .send({ snapshot: { name: mine[0].name } });
      expect(reuse.status).toBe(201);
    });

    it.each([
      ['101 ids', () => ({ ids: Array.from({ length: 101 }, (_, i) => `usr_${i}`) })],
      ['no ids', () => ({ ids: [] })],
      ['duplicate ids', () => ({ ids: ['usr_a', 'usr_a'] })],
      ['no body', () => ({})],
      ['an unknown field', () => ({ ids: ['usr_a'], status: 'active' })],
    ])('refuses %s with 400 validation_error', async (_label, body) => {
      expectError(await deleteMany(body()), 400, 'validation_error');
    });
  });

  describe('atomicity', () => {
    /** A trigger in this suite's own database that fails the log insert for one target id. */
    async function failLogsFor(targetId: string | null): Promise<void> {
      const db = t.resources.database.db;
      await sql`DROP TRIGGER IF EXISTS test_fail_log ON operation_logs`.execute(db);
      if (targetId === null) return;
      await sql
        .raw(
          `CREATE OR REPLACE FUNCTION test_fail_log() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             IF NEW.target_id = '${targetId}' THEN RAISE EXCEPTION 'injected failure'; END IF;
             RETURN NEW;
           END $$`,
        )
        .execute(db);
      await sql`CREATE TRIGGER test_fail_log BEFORE INSERT ON operation_logs FOR EACH ROW EXECUTE FUNCTION test_fail_log()`.execute(
        db,
      );
    }
    afterEach(() => failLogsFor(null));

    it.each([
      ['status', (ids: string[]) => setStatus({ ids, status: 'disabled' })],
      ['delete', (ids: string[]) => deleteMany({ ids })],
    ])('a batch %s that fails at its last card leaves every card as it was', async (_label, run) => {
      const cards = await cardsOf(owner, 5);
      const last = [...cards].sort((a, b) => (a.id < b.id ? -1 : 1))[4];
      await failLogsFor(last.id);
      const res = await run(cards.map((c) => c.id));
      expectError(res, 500, 'internal_error');
      await failLogsFor(null);
      for (const card of cards) expect((await get(card.id)).body.data).toEqual(card);
      for (const card of cards)
        expect((await logsOf(owner.accountId, { target_id: card.id })).map((l) => l.action)).toEqual([
          'create_user_card',
        ]);
    });
  });

  it('keeps GET /users/batch a card lookup (404 not_found), not a batch route', async () => {
    expectError(await get('batch'), 404, 'not_found');
    expectError(
      await t.http.patch('/users/batch').set('x-api-key', owner.apiKey).send({ status: 'active' }),
      404,
      'not_found',
    );
  });
});
