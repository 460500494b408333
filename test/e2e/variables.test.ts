import { operationLogsRepository } from '@hearth/persistence';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import {
  createVariableHosts,
  putVariable,
  putVariableBatch,
  createBranchRow,
  setFloorState,
  type VariableHosts,
} from '../support/factories/variables';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * Spec 2 variables, writes and reads by id: PUT /variables (201/200, every scope, normalisation,
 * context, value, host and lock errors), PUT /variables/batch (limits, duplicates, one transaction),
 * GET/DELETE /variables/:id, logs without values, and other accounts answering 404.
 */
describe('Variables: upsert, batch, get, delete', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let side: Caller;
  let hosts: VariableHosts;
  let otherHosts: VariableHosts;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other' });
    side = await createClientCaller(t, owner.accountId, 'Side client');
    hosts = await createVariableHosts(t, owner);
    otherHosts = await createVariableHosts(t, other);
  });
  afterAll(async () => {
    await t.close();
  });

  const put = (body: Record<string, unknown>, caller = owner) => putVariable(t, caller.apiKey, body);
  const get = (id: string, caller = owner) => t.http.get(`/variables/${id}`).set('x-api-key', caller.apiKey);
  const del = (id: string, caller = owner) =>
    t.http.delete(`/variables/${id}`).set('x-api-key', caller.apiKey);
  const logs = (accountId = owner.accountId) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId, filters: {} },
      { limit: 10000, offset: 0, sortOrder: 'asc' },
    );
  const countVariables = async (accountId: string) =>
    Number(
      (
        await t.resources.database.db
          .selectFrom('variables')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  describe('PUT /variables', () => {
    it('creates with 201, updates with 200 keeping id and created_at, in {data}', async () => {
      const first = await put({ scope: 'chat', scope_id: hosts.sessionId, key: 'mood', value: 'calm' });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        data: {
          id: expect.stringMatching(/^var_/),
          scope: 'chat',
          scope_id: hosts.sessionId,
          scope_ref: null,
          key: 'mood',
          value: 'calm',
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
        },
      });
      const second = await put({ scope: 'chat', scope_id: hosts.sessionId, key: 'mood', value: 'angry' });
      expect(second.status).toBe(200);
      expect(second.body.data).toMatchObject({
        id: first.body.data.id,
        created_at: first.body.data.created_at,
        value: 'angry',
      });
      expect(second.body.data.updated_at).toBeGreaterThanOrEqual(first.body.data.updated_at);
      expect((await get(first.body.data.id)).body).toEqual(second.body);
    });

    it.each([
      ['object', { hp: 10, tags: ['a', 'b'], nested: { deep: { ok: true } } }],
      ['array', [1, 'two', null, { three: 3 }]],
      ['number', 3.5],
      ['boolean', false],
      ['null', null],
      ['empty string', ''],
      ['unicode string', 'héllo ☃ 🎲'],
    ])('round-trips a %s value', async (_label, value) => {
      const key = `rt-${_label}`;
      const res = await put({ scope: 'global', scope_id: 'global', key, value });
      expect(res.status).toBe(201);
      expect(res.body.data.value).toEqual(value);
      expect((await get(res.body.data.id)).body.data.value).toEqual(value);
    });

    it('agrees on one variable when ten upserts of a new key race: one 201, nine 200', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          put({ scope: 'chat', scope_id: hosts.sessionId, key: 'race', value: i }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
      const listed = await t.http.get('/variables?key=race').set('x-api-key', owner.apiKey);
      expect(listed.body.meta.total).toBe(1);
    });

    it('normalises any global scope_id to "global"', async () => {
      const res = await put({ scope: 'global', scope_id: 'anything', key: 'norm', value: 1 });
      expect(res.status).toBe(201);
      expect(res.body.data.scope_id).toBe('global');
      const again = await put({ scope: 'global', scope_id: 'global', key: 'norm', value: 2 });
      expect([again.status, again.body.data.id]).toEqual([200, res.body.data.id]);
    });

    it('writes a branch by session_id + branch_id or by scope_id, to the same variable', async () => {
      const byPair = await put({
        scope: 'branch',
        session_id: hosts.sessionId,
        branch_id: hosts.branchId,
        key: 'route',
        value: 'north',
      });
      expect(byPair.status).toBe(201);
      expect(byPair.body.data).toMatchObject({
        scope: 'branch',
        scope_id: hosts.branchScopeId,
        scope_ref: { session_id: hosts.sessionId, branch_id: hosts.branchId },
      });
      const byScopeId = await put({
        scope: 'branch',
        scope_id: hosts.branchScopeId,
        key: 'route',
        value: 'south',
      });
      expect([byScopeId.status, byScopeId.body.data.id]).toEqual([200, byPair.body.data.id]);
      const both = await put({
        scope: 'branch',
        scope_id: hosts.branchScopeId,
        session_id: hosts.sessionId,
        branch_id: hosts.branchId,
        key: 'route',
        value: 'east',
      });
      expect([both.status, both.body.data.value]).toEqual([200, 'east']);
    });

    it('writes to a registered branch that has no floor yet', async () => {
      const branchId = await createBranchRow(t, { id: hosts.sessionId, account_id: owner.accountId });
      const res = await put({
        scope: 'branch',
        session_id: hosts.sessionId,
        branch_id: branchId,
        key: 'k',
        value: 1,
      });
      expect(res.status).toBe(201);
      expect(res.body.data.scope_id).toBe(`${hosts.sessionId}:${branchId}`);
    });

    it('writes floor and page variables of a floor that is neither generating nor committed', async () => {
      const floor = await put({ scope: 'floor', scope_id: hosts.openFloor.id, key: 'f', value: 1 });
      const page = await put({ scope: 'page', scope_id: hosts.openPage.id, key: 'p', value: 2 });
      expect([floor.status, page.status]).toEqual([201, 201]);
      expect(floor.body.data).toMatchObject({
        scope: 'floor',
        scope_id: hosts.openFloor.id,
        scope_ref: null,
      });
      expect(page.body.data).toMatchObject({ scope: 'page', scope_id: hosts.openPage.id });
    });

    it('lets every Client of the account read and write', async () => {
      const res = await put({ scope: 'chat', scope_id: hosts.sessionId, key: 'side', value: 's' }, side);
      expect(res.status).toBe(201);
      expect((await get(res.body.data.id, side)).status).toBe(200);
      expect((await get(res.body.data.id, owner)).body.data.value).toBe('s');
    });

    it.each([
      [{ scope: 'galaxy', scope_id: 'x', key: 'k', value: 1 }, 'scope'],
      [{ scope: 'chat', scope_id: 'x', key: '', value: 1 }, 'key'],
      [{ scope: 'chat', scope_id: 'x', key: 'k'.repeat(257), value: 1 }, 'key'],
      [{ scope: 'chat', scope_id: 'x', key: 'a\u0000b', value: 1 }, 'key'],
      [{ scope: 'chat', scope_id: 5, key: 'k', value: 1 }, 'scope_id'],
      [{ scope: 'chat', scope_id: 'x', key: 'k', value: 1, extra: true }, 'extra'],
      [{ scope_id: 'x', key: 'k', value: 1 }, 'scope'],
    ])('refuses %j with 400 validation_error naming %s', async (body, field) => {
      const res = await put(body as Record<string, unknown>);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('takes a 256-character key', async () => {
      const res = await put({ scope: 'global', scope_id: 'global', key: 'k'.repeat(256), value: 1 });
      expect(res.status).toBe(201);
    });

    it.each([
      ['missing value', { scope: 'global', scope_id: 'global', key: 'nv' }],
      ['NUL in a string', { scope: 'global', scope_id: 'global', key: 'nul', value: 'a\u0000b' }],
      ['NUL in a nested key', { scope: 'global', scope_id: 'global', key: 'nul2', value: { 'a\u0000': 1 } }],
    ])('refuses a %s with 400 variable_value_invalid', async (_label, body) => {
      const res = await put(body);
      expect([res.status, res.body.error.code]).toEqual([400, 'variable_value_invalid']);
    });

    it('takes a value at 256 KiB serialised and refuses one byte more', async () => {
      const limit = 256 * 1024;
      const atLimit = 'x'.repeat(limit - 2); // the quotes make up the rest
      const ok = await put({ scope: 'global', scope_id: 'global', key: 'big', value: atLimit });
      expect(ok.status).toBe(201);
      const over = await put({ scope: 'global', scope_id: 'global', key: 'big2', value: `${atLimit}x` });
      expect([over.status, over.body.error.code]).toEqual([400, 'variable_value_invalid']);
      expect(over.body.error.details).toMatchObject({ bytes: limit + 1, max_bytes: limit });
    });

    it('refuses values nested deeper than 128 levels', async () => {
      const nest = (depth: number): unknown => (depth === 0 ? 1 : [nest(depth - 1)]);
      expect((await put({ scope: 'global', scope_id: 'global', key: 'deep', value: nest(128) })).status).toBe(
        201,
      );
      const res = await put({ scope: 'global', scope_id: 'global', key: 'deeper', value: nest(129) });
      expect([res.status, res.body.error.code]).toEqual([400, 'variable_value_invalid']);
    });

    it.each([
      ['scope_id missing for chat', { scope: 'chat', key: 'k', value: 1 }],
      ['scope_id missing for global', { scope: 'global', key: 'k', value: 1 }],
      [
        'session_id on a chat write',
        { scope: 'chat', scope_id: 'ses_x', session_id: 'ses_x', key: 'k', value: 1 },
      ],
      [
        'branch_id on a floor write',
        { scope: 'floor', scope_id: 'flr_x', branch_id: 'br_x', key: 'k', value: 1 },
      ],
      ['branch without any host', { scope: 'branch', key: 'k', value: 1 }],
      ['branch with half a pair', { scope: 'branch', session_id: 'ses_x', key: 'k', value: 1 }],
      ['branch scope_id without a colon', { scope: 'branch', scope_id: 'ses_x', key: 'k', value: 1 }],
      ['branch scope_id with an empty half', { scope: 'branch', scope_id: 'ses_x:', key: 'k', value: 1 }],
    ])('refuses %s with 400 variable_context_invalid', async (_label, body) => {
      const res = await put(body);
      expect([res.status, res.body.error.code]).toEqual([400, 'variable_context_invalid']);
    });

    it('refuses a branch write whose scope_id and pair disagree with 400', async () => {
      const res = await put({
        scope: 'branch',
        scope_id: `${hosts.sessionId}:br_other`,
        session_id: hosts.sessionId,
        branch_id: hosts.branchId,
        key: 'k',
        value: 1,
      });
      expect([res.status, res.body.error.code]).toEqual([400, 'variable_context_invalid']);
      expect(res.body.error.details).toMatchObject({ expected_scope_id: hosts.branchScopeId });
    });

    it.each([
      ['chat', () => ({ scope: 'chat', scope_id: 'ses_missing' })],
      [
        'branch (unknown branch)',
        () => ({ scope: 'branch', session_id: hosts.sessionId, branch_id: 'br_missing' }),
      ],
      ['branch (unknown session)', () => ({ scope: 'branch', scope_id: `ses_missing:${hosts.branchId}` })],
      ['floor', () => ({ scope: 'floor', scope_id: 'flr_missing' })],
      ['page', () => ({ scope: 'page', scope_id: 'pg_missing' })],
    ])('answers 404 variable_host_not_found for a missing %s host', async (_label, target) => {
      const res = await put({ ...target(), key: 'k', value: 1 });
      expect([res.status, res.body.error.code]).toEqual([404, 'variable_host_not_found']);
    });

    it.each([
      ['chat', () => ({ scope: 'chat', scope_id: otherHosts.sessionId })],
      [
        'branch',
        () => ({ scope: 'branch', session_id: otherHosts.sessionId, branch_id: otherHosts.branchId }),
      ],
      ['floor', () => ({ scope: 'floor', scope_id: otherHosts.openFloor.id })],
      ['page', () => ({ scope: 'page', scope_id: otherHosts.openPage.id })],
    ])("answers 404 for another account's %s host and writes nothing", async (_label, target) => {
      const before = await countVariables(other.accountId);
      const res = await put({ ...target(), key: 'intrude', value: 1 });
      expect([res.status, res.body.error.code]).toEqual([404, 'variable_host_not_found']);
      expect(await countVariables(other.accountId)).toBe(before);
    });

    it('answers 404 for a branch of another session of the same account', async () => {
      const second = await createVariableHosts(t, owner);
      const res = await put({
        scope: 'branch',
        session_id: hosts.sessionId,
        branch_id: second.branchId,
        key: 'k',
        value: 1,
      });
      expect([res.status, res.body.error.code]).toEqual([404, 'variable_host_not_found']);
    });

    it('locks a committed floor and its pages with 409 variable_target_locked', async () => {
      const floor = await put({ scope: 'floor', scope_id: hosts.committedFloor.id, key: 'k', value: 1 });
      expect([floor.status, floor.body.error.code]).toEqual([409, 'variable_target_locked']);
      expect(floor.body.error.details).toMatchObject({
        floor_id: hosts.committedFloor.id,
        floor_state: 'committed',
      });
      const page = await put({ scope: 'page', scope_id: hosts.committedPage.id, key: 'k', value: 1 });
      expect([page.status, page.body.error.code]).toEqual([409, 'variable_target_locked']);
    });

    it('locks a generating floor and its pages', async () => {
      const fresh = await createVariableHosts(t, owner);
      await setFloorState(t, fresh.openFloor.id, 'generating');
      const floor = await put({ scope: 'floor', scope_id: fresh.openFloor.id, key: 'k', value: 1 });
      expect([floor.status, floor.body.error.code]).toEqual([409, 'variable_target_locked']);
      expect(floor.body.error.details.floor_state).toBe('generating');
      const page = await put({ scope: 'page', scope_id: fresh.openPage.id, key: 'k', value: 1 });
      expect([page.status, page.body.error.code]).toEqual([409, 'variable_target_locked']);
    });

    it('logs variable.upsert with key names and value size only', async () => {
      const secret = 'the value must never reach a log';
      const res = await put({ scope: 'chat', scope_id: hosts.sessionId, key: 'logged', value: { secret } });
      const log = (await logs()).find(
        (l) => l.target_id === res.body.data.id && l.action === 'variable.upsert',
      );
      expect(log).toBeDefined();
      expect(log!.after_ref).toEqual({
        scope: 'chat',
        scope_id: hosts.sessionId,
        key: 'logged',
        value_bytes: Buffer.byteLength(JSON.stringify({ secret })),
      });
      expect(log!.session_id).toBe(hosts.sessionId);
      expect(JSON.stringify(log)).not.toContain(secret);
    });
  });

  describe('PUT /variables/batch', () => {
    it('writes mixed scopes and reports created/updated per index with meta', async () => {
      await put({ scope: 'global', scope_id: 'global', key: 'b-existing', value: 0 });
      const res = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'b-existing', value: 1 },
        { scope: 'chat', scope_id: hosts.sessionId, key: 'b-chat', value: { a: 1 } },
        {
          scope: 'branch',
          session_id: hosts.sessionId,
          branch_id: hosts.branchId,
          key: 'b-branch',
          value: [1],
        },
        { scope: 'floor', scope_id: hosts.openFloor.id, key: 'b-floor', value: null },
      ]);
      expect(res.status).toBe(200);
      expect(res.body.data.meta).toEqual({ total: 4, created: 3, updated: 1 });
      expect(
        res.body.data.results.map((r: { index: number; action: string }) => [r.index, r.action]),
      ).toEqual([
        [0, 'updated'],
        [1, 'created'],
        [2, 'created'],
        [3, 'created'],
      ]);
      expect(res.body.data.results[1].data).toMatchObject({ scope: 'chat', key: 'b-chat', value: { a: 1 } });
      expect(res.body.data.results[2].data.scope_ref).toEqual({
        session_id: hosts.sessionId,
        branch_id: hosts.branchId,
      });
      const all = await logs();
      const first = all.find(
        (l) => l.target_id === res.body.data.results[0].data.id && l.action === 'variable.batch_upsert',
      );
      expect(first?.operation_group_id).toEqual(expect.any(String));
      const group = all.filter((l) => l.operation_group_id === first!.operation_group_id);
      expect(group.map((l) => [l.action, l.target_id])).toEqual(
        res.body.data.results.map((r: { data: { id: string } }) => ['variable.batch_upsert', r.data.id]),
      );
    });

    it('takes 100 items and refuses 101 and 0 with 400 validation_error', async () => {
      const items = (n: number, prefix: string) =>
        Array.from({ length: n }, (_, i) => ({
          scope: 'chat',
          scope_id: hosts.sessionId,
          key: `${prefix}${i}`,
          value: i,
        }));
      const ok = await putVariableBatch(t, owner.apiKey, items(100, 'hundred-'));
      expect(ok.status).toBe(200);
      expect(ok.body.data.meta).toEqual({ total: 100, created: 100, updated: 0 });
      const before = await countVariables(owner.accountId);
      const over = await putVariableBatch(t, owner.apiKey, items(101, 'over-'));
      expect([over.status, over.body.error.code]).toEqual([400, 'validation_error']);
      const empty = await putVariableBatch(t, owner.apiKey, []);
      expect([empty.status, empty.body.error.code]).toEqual([400, 'validation_error']);
      expect(await countVariables(owner.accountId)).toBe(before);
    });

    it('refuses duplicate normalised targets with 400 variable_batch_duplicate_target', async () => {
      const res = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'dup', value: 1 },
        { scope: 'chat', scope_id: hosts.sessionId, key: 'dup', value: 1 },
        { scope: 'global', scope_id: 'whatever', key: 'dup', value: 2 },
      ]);
      expect([res.status, res.body.error.code]).toEqual([400, 'variable_batch_duplicate_target']);
      expect(res.body.error.details).toMatchObject({
        index: 2,
        first_index: 0,
        scope: 'global',
        scope_id: 'global',
      });
      const branch = await putVariableBatch(t, owner.apiKey, [
        { scope: 'branch', session_id: hosts.sessionId, branch_id: hosts.branchId, key: 'dup', value: 1 },
        { scope: 'branch', scope_id: hosts.branchScopeId, key: 'dup', value: 2 },
      ]);
      expect([branch.status, branch.body.error.code]).toEqual([400, 'variable_batch_duplicate_target']);
    });

    it('refuses invalid items naming their index (schema, context, value)', async () => {
      const schema = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'fine', value: 1 },
        { scope: 'global', scope_id: 'global', key: '', value: 1 },
      ]);
      expect([schema.status, schema.body.error.code]).toEqual([400, 'validation_error']);
      expect(schema.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(
        'items.1.key',
      );
      const context = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'fine', value: 1 },
        { scope: 'chat', key: 'x', value: 1 },
      ]);
      expect([context.status, context.body.error.code, context.body.error.details.index]).toEqual([
        400,
        'variable_context_invalid',
        1,
      ]);
      const value = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'x' },
      ]);
      expect([value.status, value.body.error.code, value.body.error.details.index]).toEqual([
        400,
        'variable_value_invalid',
        0,
      ]);
      const notArray = await t.http
        .put('/variables/batch')
        .set('x-api-key', owner.apiKey)
        .send({ items: 'x' });
      expect([notArray.status, notArray.body.error.code]).toEqual([400, 'validation_error']);
    });

    it('is one transaction: a missing or locked host at the end leaves nothing written', async () => {
      const before = await countVariables(owner.accountId);
      const missing = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'tx-1', value: 1 },
        { scope: 'chat', scope_id: hosts.sessionId, key: 'tx-2', value: 2 },
        { scope: 'floor', scope_id: 'flr_missing', key: 'tx-3', value: 3 },
      ]);
      expect([missing.status, missing.body.error.code, missing.body.error.details.index]).toEqual([
        404,
        'variable_host_not_found',
        2,
      ]);
      const locked = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'tx-1', value: 1 },
        { scope: 'page', scope_id: hosts.committedPage.id, key: 'tx-3', value: 3 },
      ]);
      expect([locked.status, locked.body.error.code, locked.body.error.details.index]).toEqual([
        409,
        'variable_target_locked',
        1,
      ]);
      const foreign = await putVariableBatch(t, owner.apiKey, [
        { scope: 'global', scope_id: 'global', key: 'tx-1', value: 1 },
        { scope: 'chat', scope_id: otherHosts.sessionId, key: 'tx-3', value: 3 },
      ]);
      expect([foreign.status, foreign.body.error.code]).toEqual([404, 'variable_host_not_found']);
      expect(await countVariables(owner.accountId)).toBe(before);
      expect(
        (await logs()).filter((l) => l.after_ref && (l.after_ref as { key?: string }).key === 'tx-1'),
      ).toEqual([]);
    });
  });

  describe('GET and DELETE /variables/:id', () => {
    it("answers 404 variable_not_found for unknown ids and another account's variable", async () => {
      const mine = await put({ scope: 'global', scope_id: 'global', key: 'private', value: 'mine' });
      for (const res of [await get('var_missing'), await get(mine.body.data.id, other)]) {
        expect([res.status, res.body.error.code]).toEqual([404, 'variable_not_found']);
        expect(JSON.stringify(res.body)).not.toContain('mine');
      }
      const foreignDelete = await del(mine.body.data.id, other);
      expect([foreignDelete.status, foreignDelete.body.error.code]).toEqual([404, 'variable_not_found']);
      expect((await get(mine.body.data.id)).status).toBe(200);
      const unknown = await del('var_missing');
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'variable_not_found']);
    });

    it('deletes with {id, deleted: true}, logs variable.delete, and accepts the id again', async () => {
      const res = await put({ scope: 'chat', scope_id: hosts.sessionId, key: 'gone', value: 1 });
      const id = res.body.data.id as string;
      const deleted = await del(id, side);
      expect([deleted.status, deleted.body]).toEqual([200, { data: { id, deleted: true } }]);
      expect((await get(id)).status).toBe(404);
      expect((await logs()).filter((l) => l.target_id === id).map((l) => l.action)).toEqual([
        'variable.upsert',
        'variable.delete',
      ]);
      const again = await del(id);
      expect([again.status, again.body]).toEqual([200, { data: { id, deleted: true } }]);
      expect((await logs()).filter((l) => l.target_id === id)).toHaveLength(2);
      const otherAccount = await del(id, other);
      expect(otherAccount.status).toBe(404);
    });

    it('deletes floor and page variables of an open floor, refuses locked ones with 409', async () => {
      const fresh = await createVariableHosts(t, owner);
      const floorVar = await put({ scope: 'floor', scope_id: fresh.openFloor.id, key: 'k', value: 1 });
      const pageVar = await put({ scope: 'page', scope_id: fresh.openPage.id, key: 'k', value: 1 });
      await setFloorState(t, fresh.openFloor.id, 'committed');
      for (const id of [floorVar.body.data.id, pageVar.body.data.id]) {
        const res = await del(id);
        expect([res.status, res.body.error.code]).toEqual([409, 'variable_target_locked']);
        expect((await get(id)).status).toBe(200);
      }
      await setFloorState(t, fresh.openFloor.id, 'cancelled');
      expect((await del(floorVar.body.data.id)).status).toBe(200);
      expect((await del(pageVar.body.data.id)).status).toBe(200);
    });

    it("cleans a deleted session's variables of every scope; their ids are still accepted by DELETE", async () => {
      const fresh = await createVariableHosts(t, owner);
      const written = await putVariableBatch(t, owner.apiKey, [
        { scope: 'chat', scope_id: fresh.sessionId, key: 'c', value: 1 },
        { scope: 'branch', scope_id: fresh.branchScopeId, key: 'b', value: 1 },
        { scope: 'floor', scope_id: fresh.openFloor.id, key: 'f', value: 1 },
        { scope: 'page', scope_id: fresh.openPage.id, key: 'p', value: 1 },
      ]);
      const ids = written.body.data.results.map((r: { data: { id: string } }) => r.data.id) as string[];
      expect(
        (await t.http.delete(`/sessions/${fresh.sessionId}`).set('x-api-key', owner.apiKey)).status,
      ).toBe(200);
      for (const id of ids) expect((await get(id)).status).toBe(404);
      const list = await t.http
        .get(`/variables?scope=chat&scope_id=${fresh.sessionId}`)
        .set('x-api-key', owner.apiKey);
      expect(list.body.data).toEqual([]);
      for (const id of ids) {
        const res = await del(id);
        expect([res.status, res.body]).toEqual([200, { data: { id, deleted: true } }]);
        expect((await del(id, other)).status).toBe(404);
      }
    });

    it('rejects an over-long id with 400 validation_error', async () => {
      const res = await get('v'.repeat(201));
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    });
  });
});
