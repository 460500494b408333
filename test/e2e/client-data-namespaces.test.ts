import { newId } from '@hearth/domain';
import {
  clientDataRepository,
  inTransaction,
  operationLogsRepository,
  type FloorRow,
} from '@hearth/persistence';
import { appendTurns } from '../support/factories/conversation';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The client data namespace registry and the session state reads (docs/decisions.md "Client data and
 * session state"): `{data}` envelope, limits at and one past the edge, reserved and duplicate names,
 * account isolation (every Client of the account, no other account), operation logs, the PATCH no-op,
 * the state routes' 400s and 404s and empty state, and 503 `feature_unavailable` when disabled.
 * Writes made by turns are tested with the turns; the writes here are put straight in through the
 * repository, only to see the reads and the delete count them.
 */
describe('client data namespaces', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let client: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { ENABLE_CLIENT_DATA: 'true' } });
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other' });
    client = await createClientCaller(t, owner.accountId, 'Side client');
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, key = owner.apiKey) =>
    t.http
      .post('/client-data/namespaces')
      .set('x-api-key', key)
      .send(body as object);
  const get = (path: string, key = owner.apiKey) => t.http.get(path).set('x-api-key', key);
  const patch = (name: string, body: unknown, key = owner.apiKey) =>
    t.http
      .patch(`/client-data/namespaces/${name}`)
      .set('x-api-key', key)
      .send(body as object);
  const del = (name: string, key = owner.apiKey) =>
    t.http.delete(`/client-data/namespaces/${name}`).set('x-api-key', key);
  const created = async (body: Record<string, unknown>, key = owner.apiKey) => {
    const res = await post(body, key);
    if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data as { id: string; name: string };
  };
  const logs = (accountId = owner.accountId) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId, filters: {} },
      { limit: 10000, offset: 0, sortOrder: 'asc' },
    );
  const expectError = (
    res: { status: number; body: { error?: { code: string } } },
    status: number,
    code: string,
  ) => expect([res.status, res.body.error?.code]).toEqual([status, code]);

  describe('registry', () => {
    it('registers a namespace with defaults, in {data}, with its create log', async () => {
      const res = await post({ name: 'rpg.inventory' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(/^cdns_/),
          name: 'rpg.inventory',
          description: null,
          replay_policy: 'replay',
          max_items: 1000,
          max_bytes: 1048576,
          created_at: expect.any(Number),
          updated_at: res.body.data.created_at,
        },
      });
      const log = (await logs()).find((l) => l.target_id === res.body.data.id);
      expect(log).toMatchObject({
        action: 'client_data_namespace.create',
        target_type: 'client_data_namespace',
        after_ref: { name: 'rpg.inventory', replay_policy: 'replay', max_items: 1000, max_bytes: 1048576 },
      });
    });

    it('takes every field', async () => {
      const res = await post({
        name: 'full',
        description: 'Quest flags',
        replay_policy: 'confirm',
        max_items: 5,
        max_bytes: 500,
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        description: 'Quest flags',
        replay_policy: 'confirm',
        max_items: 5,
        max_bytes: 500,
      });
      expect(
        (await post({ name: 'blocked', replay_policy: 'block', description: null })).body.data,
      ).toMatchObject({ replay_policy: 'block', description: null });
    });

    it('takes limits at the limit and refuses one past it (400 validation_error)', async () => {
      const ok = [
        { name: 'n'.repeat(64) },
        { name: 'items-max', max_items: 10000 },
        { name: 'items-min', max_items: 1 },
        { name: 'bytes-max', max_bytes: 16777216 },
        { name: 'bytes-min', max_bytes: 1 },
        { name: 'desc-max', description: 'd'.repeat(2000) },
        { name: 'desc-astral', description: '😀'.repeat(2000) },
      ];
      for (const body of ok) expect([body.name, (await post(body)).status]).toEqual([body.name, 201]);
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ name: 'n'.repeat(65) }, 'name'],
        [{ name: 'items-over', max_items: 10001 }, 'max_items'],
        [{ name: 'items-zero', max_items: 0 }, 'max_items'],
        [{ name: 'items-frac', max_items: 1.5 }, 'max_items'],
        [{ name: 'items-text', max_items: '5' }, 'max_items'],
        [{ name: 'items-null', max_items: null }, 'max_items'],
        [{ name: 'bytes-over', max_bytes: 16777217 }, 'max_bytes'],
        [{ name: 'bytes-zero', max_bytes: 0 }, 'max_bytes'],
        [{ name: 'desc-over', description: 'd'.repeat(2001) }, 'description'],
        [{ name: 'desc-vs', description: 'd'.repeat(1999) + '\u2764\ufe0f' }, 'description'],
        [{ name: 'desc-nul', description: 'a\u0000b' }, 'description'],
        [{ name: 'desc-surrogate', description: 'a\ud800b' }, 'description'],
        [{ name: 'desc-number', description: 5 }, 'description'],
        [{ name: 'policy', replay_policy: 'never' }, 'replay_policy'],
        [{ name: 'policy-null', replay_policy: null }, 'replay_policy'],
        [{ name: 'extra', owner: 'me' }, 'owner'],
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: 'Upper' }, 'name'],
        [{ name: '1abc' }, 'name'],
        [{ name: '_abc' }, 'name'],
        [{ name: 'a b' }, 'name'],
        [{ name: 'a/b' }, 'name'],
        [{ name: 7 }, 'name'],
      ];
      for (const [body, field] of bad) {
        const res = await post(body);
        expect([JSON.stringify(body).slice(0, 40), res.status, res.body.error?.code]).toEqual([
          JSON.stringify(body).slice(0, 40),
          400,
          'validation_error',
        ]);
        expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      }
      const names = (await get('/client-data/namespaces')).body.data.map((n: { name: string }) => n.name);
      expect(names.filter((n: string) => n.startsWith('desc-') || n.startsWith('items-'))).toEqual([
        'desc-astral',
        'desc-max',
        'items-max',
        'items-min',
      ]);
    });

    it('refuses the public game_state (409 client_data_namespace_reserved)', async () => {
      expectError(await post({ name: 'game_state' }), 409, 'client_data_namespace_reserved');
      expectError(await post({ name: 'game_state' }, other.apiKey), 409, 'client_data_namespace_reserved');
      expectError(await get('/client-data/namespaces/game_state'), 404, 'client_data_namespace_not_found');
    });

    it('keeps names unique per account (409 client_data_namespace_conflict), not across accounts', async () => {
      await created({ name: 'dup' });
      expectError(await post({ name: 'dup', max_items: 3 }), 409, 'client_data_namespace_conflict');
      expectError(await post({ name: 'dup' }, client.apiKey), 403, 'client_data_namespace_account_only');
      expect((await post({ name: 'dup' }, other.apiKey)).status).toBe(201);
      const concurrent = await Promise.all([
        post({ name: 'race' }),
        post({ name: 'race' }),
        post({ name: 'race' }),
      ]);
      expect(concurrent.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      expect(
        (await logs()).filter(
          (l) =>
            l.action === 'client_data_namespace.create' &&
            l.after_ref &&
            (l.after_ref as { name: string }).name === 'race',
        ),
      ).toHaveLength(1);
    });

    it('lists the account’s namespaces by name with meta.total, and only its own', async () => {
      const mine = await created({ name: 'zz-last' });
      const theirs = await created({ name: 'aa-first' }, other.apiKey);
      const list = await get('/client-data/namespaces');
      expect(list.status).toBe(200);
      const names = list.body.data.map((n: { name: string }) => n.name);
      expect(names).toEqual([...names].sort());
      expect(names).toContain(mine.name);
      expect(list.body.data.map((n: { id: string }) => n.id)).not.toContain(theirs.id);
      expect(list.body.meta).toEqual({ total: list.body.data.length });
      expect(Object.keys(list.body.data[0]).sort()).toEqual(
        [
          'created_at',
          'description',
          'id',
          'max_bytes',
          'max_items',
          'name',
          'replay_policy',
          'updated_at',
        ].sort(),
      );
      const theirList = await get('/client-data/namespaces', other.apiKey);
      expect(theirList.body.data.map((n: { id: string }) => n.id)).toContain(theirs.id);
      expect(theirList.body.data.map((n: { id: string }) => n.id)).not.toContain(mine.id);
      expectError(await get('/client-data/namespaces?limit=5'), 400, 'validation_error');
    });

    it('reads one namespace with its usage; unknown names are 404 client_data_namespace_not_found', async () => {
      const ns = await created({ name: 'detail', description: 'x' });
      const res = await get('/client-data/namespaces/detail');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          id: ns.id,
          name: 'detail',
          description: 'x',
          replay_policy: 'replay',
          max_items: 1000,
          max_bytes: 1048576,
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
          usage: { writes: 0, sessions: 0, bytes: 0 },
        },
      });
      for (const name of ['missing', 'Upper', 'n'.repeat(300), '%00'])
        expectError(await get(`/client-data/namespaces/${name}`), 404, 'client_data_namespace_not_found');
    });

    it('patches settings, needs at least one field, refuses the name, and a no-op writes nothing', async () => {
      const ns = await created({ name: 'patched', description: 'before' });
      const res = await patch('patched', { replay_policy: 'block', max_items: 10000, max_bytes: 16777216 });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: ns.id,
        name: 'patched',
        description: 'before',
        replay_policy: 'block',
        max_items: 10000,
        max_bytes: 16777216,
      });
      expect(res.body.data.updated_at).toBeGreaterThanOrEqual(res.body.data.created_at);
      const log = (await logs()).filter((l) => l.target_id === ns.id).at(-1);
      expect(log).toMatchObject({
        action: 'client_data_namespace.update',
        before_ref: { name: 'patched', replay_policy: 'replay', max_items: 1000, max_bytes: 1048576 },
        after_ref: { name: 'patched', replay_policy: 'block', max_items: 10000, max_bytes: 16777216 },
        metadata: { changed_fields: ['replay_policy', 'max_items', 'max_bytes'] },
      });

      expectError(await patch('patched', {}), 400, 'validation_error');
      for (const body of [
        { name: 'renamed' },
        { max_items: 10001 },
        { max_bytes: 16777217 },
        { max_items: null },
        { description: 'd'.repeat(2001) },
        { replay_policy: 'sometimes' },
      ])
        expectError(await patch('patched', body), 400, 'validation_error');

      const before = (await logs()).length;
      const same = await patch('patched', {
        replay_policy: 'block',
        description: 'before',
        max_items: 10000,
      });
      expect(same.status).toBe(200);
      expect(same.body.data).toEqual(res.body.data);
      expect((await logs()).length).toBe(before);

      const cleared = await patch('patched', { description: null });
      expect(cleared.body.data.description).toBeNull();
      expect((await logs()).filter((l) => l.target_id === ns.id).at(-1)).toMatchObject({
        metadata: { changed_fields: ['description'] },
      });
      expect((await patch('patched', { description: 'd'.repeat(2000) })).status).toBe(200);
      expectError(await patch('missing', { max_items: 5 }), 404, 'client_data_namespace_not_found');
    });

    it('deletes a namespace with its log; then it is gone and its name free again', async () => {
      const ns = await created({ name: 'doomed', replay_policy: 'confirm' });
      const res = await del('doomed');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { name: 'doomed', deleted: true, deleted_writes: 0 } });
      expectError(await get('/client-data/namespaces/doomed'), 404, 'client_data_namespace_not_found');
      expectError(await del('doomed'), 404, 'client_data_namespace_not_found');
      expect((await logs()).filter((l) => l.target_id === ns.id)).toEqual([
        expect.objectContaining({ action: 'client_data_namespace.create' }),
        expect.objectContaining({
          action: 'client_data_namespace.delete',
          before_ref: {
            name: 'doomed',
            replay_policy: 'confirm',
            max_items: 1000,
            max_bytes: 1048576,
            deleted_writes: 0,
          },
        }),
      ]);
      expect((await post({ name: 'doomed' })).status).toBe(201);
    });

    it('lets every Client of the account read, only the account itself write; another account gets 404', async () => {
      await created({ name: 'by-owner' });
      expect((await get('/client-data/namespaces/by-owner', client.apiKey)).status).toBe(200);
      expect(
        (await get('/client-data/namespaces', client.apiKey)).body.data.map((n: { name: string }) => n.name),
      ).toContain('by-owner');
      // A side Client would change every session of every Project: 403, nothing written.
      const before = (await logs()).length;
      expectError(
        await post({ name: 'by-client' }, client.apiKey),
        403,
        'client_data_namespace_account_only',
      );
      expectError(
        await patch('by-owner', { max_items: 7 }, client.apiKey),
        403,
        'client_data_namespace_account_only',
      );
      expectError(await del('by-owner', client.apiKey), 403, 'client_data_namespace_account_only');
      expect((await logs()).length).toBe(before);
      expect((await get('/client-data/namespaces/by-owner')).body.data.max_items).toBe(1000);
      expectError(await get('/client-data/namespaces/by-client'), 404, 'client_data_namespace_not_found');

      for (const res of [
        await get('/client-data/namespaces/by-owner', other.apiKey),
        await patch('by-owner', { max_items: 8 }, other.apiKey),
        await del('by-owner', other.apiKey),
      ])
        expectError(res, 404, 'client_data_namespace_not_found');
      expect((await patch('by-owner', { max_items: 7 })).body.data.max_items).toBe(7);
      expect((await del('by-owner')).body.data).toEqual({
        name: 'by-owner',
        deleted: true,
        deleted_writes: 0,
      });
    });

    it('answers the account usage with the configured limits', async () => {
      const res = await get('/client-data/usage', client.apiKey);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          items: 0,
          bytes: 0,
          max_items: t.config.clientData.accountMaxItems,
          max_bytes: t.config.clientData.accountMaxBytes,
        },
      });
      expectError(await get('/client-data/usage?all=1'), 400, 'validation_error');
    });

    it('documents its routes in the OpenAPI document', async () => {
      const doc = await t.http.get('/openapi.json').expect(200);
      expect(Object.keys(doc.body.paths)).toEqual(
        expect.arrayContaining([
          '/client-data/namespaces',
          '/client-data/namespaces/{name}',
          '/client-data/usage',
          '/sessions/{id}/state',
          '/floors/{id}/session-state-writes',
        ]),
      );
    });

    it('an account registers at most 100 namespaces: the 101st is 409, deleting one frees room', async () => {
      const busy = await createAccountCaller(t, { name: 'Busy' });
      for (let i = 0; i < 100; i++) await created({ name: `many${i}` }, busy.apiKey);
      expectError(await post({ name: 'one.more' }, busy.apiKey), 409, 'client_data_namespace_limit_exceeded');
      expect((await get('/client-data/namespaces', busy.apiKey)).body.meta).toEqual({ total: 100 });
      // Another account is not affected; a deleted namespace frees its place.
      expect((await post({ name: 'one.more' })).status).toBe(201);
      expect((await del('many0', busy.apiKey)).status).toBe(200);
      expect((await post({ name: 'one.more' }, busy.apiKey)).status).toBe(201);
    });

    it('needs an API key', async () => {
      expectError(await t.http.get('/client-data/namespaces').set('x-api-key', ''), 401, 'unauthorized');
    });
  });

  describe('session state reads', () => {
    let sessionId: string;
    let accountSession: { id: string; account_id: string };
    let floors: FloorRow[];
    let otherSessionId: string;
    let otherFloor: FloorRow;

    beforeAll(async () => {
      sessionId = (await createSession(t, { apiKey: owner.apiKey })).id;
      const row = await findSessionRow(t, sessionId);
      accountSession = { id: row!.id, account_id: row!.account_id };
      const foreign = await createSession(t, { apiKey: other.apiKey });
      otherSessionId = foreign.id;
      const foreignRow = await findSessionRow(t, foreign.id);
      [otherFloor] = await appendTurns(t, { id: foreignRow!.id, account_id: foreignRow!.account_id }, 1);
    });

    it('answers an empty main branch with no floor and no items', async () => {
      const res = await get(`/sessions/${sessionId}/state`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          session_id: sessionId,
          branch_id: expect.any(String),
          floor_id: null,
          floor_no: null,
          items: [],
        },
      });
      const branches = await get(`/sessions/${sessionId}/branches`);
      const main = branches.body.data.find((b: { name: string }) => b.name === 'main');
      expect(res.body.data.branch_id).toBe(main.id);
      expect((await get(`/sessions/${sessionId}/state?branch_id=main`)).body).toEqual(res.body);
    });

    it('answers the head floor’s empty state, and a floor’s empty write list', async () => {
      floors = await appendTurns(t, accountSession, 2);
      const head = floors[1];
      const res = await get(`/sessions/${sessionId}/state`);
      expect(res.body.data).toEqual({
        session_id: sessionId,
        branch_id: head.branch_id,
        floor_id: head.id,
        floor_no: head.floor_no,
        items: [],
      });
      const byFloor = await get(`/sessions/${sessionId}/state?floor_id=${floors[0].id}`);
      expect(byFloor.body.data).toMatchObject({
        floor_id: floors[0].id,
        floor_no: floors[0].floor_no,
        items: [],
      });
      const byNamespace = await get(`/sessions/${sessionId}/state?namespace=unregistered`);
      expect(byNamespace.body.data).toMatchObject({ floor_id: head.id, items: [] });
      const writes = await get(`/floors/${head.id}/session-state-writes`);
      expect([writes.status, writes.body]).toEqual([200, { data: [] }]);
    });

    it('refuses floor_id with branch_id, and unknown query parameters (400 validation_error)', async () => {
      const head = floors[1];
      expectError(
        await get(`/sessions/${sessionId}/state?floor_id=${head.id}&branch_id=main`),
        400,
        'validation_error',
      );
      expectError(await get(`/sessions/${sessionId}/state?floor=${head.id}`), 400, 'validation_error');
      expectError(await get(`/sessions/${sessionId}/state?branch_id=`), 400, 'validation_error');
      expectError(await get(`/sessions/${sessionId}/state?namespace=a&namespace=b`), 400, 'validation_error');
    });

    it('answers 404 with the transcript’s codes for unknown or foreign sessions, floors and branches', async () => {
      expectError(await get(`/sessions/${sessionId}/state?floor_id=flr_missing`), 404, 'floor_not_found');
      expectError(
        await get(`/sessions/${sessionId}/state?floor_id=${otherFloor.id}`),
        404,
        'floor_not_found',
      );
      const second = await createSession(t, { apiKey: owner.apiKey });
      const secondRow = await findSessionRow(t, second.id);
      const [secondFloor] = await appendTurns(t, { id: secondRow!.id, account_id: secondRow!.account_id }, 1);
      expectError(
        await get(`/sessions/${sessionId}/state?floor_id=${secondFloor.id}`),
        404,
        'floor_not_found',
      );
      expectError(await get(`/sessions/${sessionId}/state?branch_id=br_missing`), 404, 'branch_not_found');
      expectError(
        await get(`/sessions/${sessionId}/state?branch_id=${secondFloor.branch_id}`),
        404,
        'branch_not_found',
      );
      // The same answers as the transcript route for the same callers.
      for (const [path, key] of [
        [`/sessions/${otherSessionId}`, owner.apiKey],
        [`/sessions/ses_missing`, owner.apiKey],
        [`/sessions/${sessionId}`, other.apiKey],
        [`/sessions/${sessionId}`, client.apiKey],
      ] as const) {
        const transcript = await get(`${path}/floors`, key);
        const state = await get(`${path}/state`, key);
        expect([state.status, state.body.error?.code]).toEqual([
          transcript.status,
          transcript.body.error?.code,
        ]);
        expectError(state, 404, 'not_found');
      }
      expectError(await get(`/floors/${otherFloor.id}/session-state-writes`), 404, 'floor_not_found');
      expectError(await get('/floors/flr_missing/session-state-writes'), 404, 'floor_not_found');
      expectError(
        await get(`/floors/${floors[0].id}/session-state-writes`, client.apiKey),
        404,
        'floor_not_found',
      );
      expect((await get(`/floors/${otherFloor.id}/session-state-writes`, other.apiKey)).status).toBe(200);
    });

    it('reads writes on the lineage, newest per slot, deletes hidden; DELETE counts them', async () => {
      const rpg = await created({ name: 'st.rpg', replay_policy: 'confirm' });
      const notes = await created({ name: 'st.notes' });
      const [first, second] = floors;
      const write = (
        floor: FloorRow,
        seq: number,
        ns: { id: string; name: string },
        slot: string,
        value: unknown,
      ) => {
        const json = value === undefined ? null : JSON.stringify(value);
        return {
          id: newId('ssm'),
          account_id: owner.accountId,
          namespace_id: ns.id,
          namespace: ns.name,
          session_id: sessionId,
          branch_id: floor.branch_id,
          floor_id: floor.id,
          seq,
          slot,
          present: json !== null,
          value: json,
          value_bytes: json === null ? 0 : Buffer.byteLength(json),
          run_id: null,
          created_by_client_id: owner.clientId,
          created_at: Date.now(),
        };
      };
      const rows = [
        write(first, 1, rpg, 'hp', 10),
        write(first, 2, rpg, 'gold', { coins: 5 }),
        write(first, 3, notes, 'a', 'x'),
        write(second, 1, rpg, 'hp', 7),
        write(second, 2, notes, 'a', undefined),
      ];
      await inTransaction(t.resources.database.db, ({ tx }) =>
        clientDataRepository.insertMutations(tx, rows),
      );

      const head = await get(`/sessions/${sessionId}/state`);
      expect(head.body.data.items).toEqual([
        {
          namespace: 'st.rpg',
          slot: 'gold',
          value: { coins: 5 },
          mutation_id: rows[1].id,
          floor_id: first.id,
          floor_no: first.floor_no,
          updated_at: rows[1].created_at,
        },
        expect.objectContaining({ namespace: 'st.rpg', slot: 'hp', value: 7, mutation_id: rows[3].id }),
      ]);
      const atFirst = await get(`/sessions/${sessionId}/state?floor_id=${first.id}`);
      expect(
        atFirst.body.data.items.map((i: { namespace: string; slot: string; value: unknown }) => [
          i.namespace,
          i.slot,
          i.value,
        ]),
      ).toEqual([
        ['st.notes', 'a', 'x'],
        ['st.rpg', 'gold', { coins: 5 }],
        ['st.rpg', 'hp', 10],
      ]);
      expect(
        (await get(`/sessions/${sessionId}/state?floor_id=${first.id}&namespace=st.notes`)).body.data.items,
      ).toHaveLength(1);
      expect((await get(`/sessions/${sessionId}/state?namespace=st.notes`)).body.data.items).toEqual([]);

      const branch = await t.http.post(`/floors/${first.id}/branch`).set('x-api-key', owner.apiKey).send({});
      expect(branch.status).toBe(201);
      const onBranch = await get(`/sessions/${sessionId}/state?branch_id=${branch.body.data.branch_id}`);
      expect(onBranch.body.data).toMatchObject({ branch_id: branch.body.data.branch_id, floor_id: first.id });
      expect(onBranch.body.data.items).toEqual(atFirst.body.data.items);

      const floorWrites = await get(`/floors/${second.id}/session-state-writes`);
      expect(floorWrites.body.data).toEqual([
        {
          id: rows[3].id,
          namespace: 'st.rpg',
          slot: 'hp',
          present: true,
          value: 7,
          seq: 1,
          replay_policy: 'confirm',
          created_at: rows[3].created_at,
        },
        expect.objectContaining({
          id: rows[4].id,
          namespace: 'st.notes',
          present: false,
          value: null,
          seq: 2,
          replay_policy: 'replay',
        }),
      ]);

      const detail = await get('/client-data/namespaces/st.rpg');
      expect(detail.body.data.usage).toEqual({
        writes: 3,
        sessions: 1,
        bytes: rows
          .slice(0, 4)
          .filter((r) => r.namespace === 'st.rpg')
          .reduce((s, r) => s + r.value_bytes, 0),
      });
      const usage = await get('/client-data/usage');
      // Items are stored values: the delete (rows[4]) stores none.
      expect(usage.body.data).toMatchObject({ items: 4, bytes: rows.reduce((s, r) => s + r.value_bytes, 0) });

      expect((await del('st.rpg')).body.data).toEqual({ name: 'st.rpg', deleted: true, deleted_writes: 3 });
      expect((await get('/client-data/usage')).body.data).toMatchObject({ items: 1, bytes: 3 });
      expect((await get(`/sessions/${sessionId}/state?floor_id=${first.id}`)).body.data.items).toEqual([
        expect.objectContaining({ namespace: 'st.notes', slot: 'a' }),
      ]);
      expect((await logs()).filter((l) => l.target_id === rpg.id).at(-1)).toMatchObject({
        action: 'client_data_namespace.delete',
        before_ref: { deleted_writes: 3 },
      });
    });
  });
});

describe('client data disabled', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { ENABLE_CLIENT_DATA: 'false' } });
    owner = await createAccountCaller(t, { name: 'Owner' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503 feature_unavailable on every route, before validation and lookups', async () => {
    const key = owner.apiKey;
    const session = await createSession(t, { apiKey: key });
    const responses = [
      await t.http.post('/client-data/namespaces').set('x-api-key', key).send({ name: 'ok' }),
      await t.http.post('/client-data/namespaces').set('x-api-key', key).send({ name: 'BAD', extra: 1 }),
      await t.http.get('/client-data/namespaces').set('x-api-key', key),
      await t.http.get('/client-data/namespaces?unknown=1').set('x-api-key', key),
      await t.http.get('/client-data/namespaces/missing').set('x-api-key', key),
      await t.http.patch('/client-data/namespaces/missing').set('x-api-key', key).send({}),
      await t.http.delete('/client-data/namespaces/missing').set('x-api-key', key),
      await t.http.get('/client-data/usage').set('x-api-key', key),
      await t.http.get(`/sessions/${session.id}/state`).set('x-api-key', key),
      await t.http.get(`/sessions/ses_missing/state?floor_id=a&branch_id=b`).set('x-api-key', key),
      await t.http.get('/floors/flr_missing/session-state-writes').set('x-api-key', key),
    ];
    for (const res of responses)
      expect([res.status, res.body.error?.code]).toEqual([503, 'feature_unavailable']);
    const anonymous = await t.http.get('/client-data/namespaces').set('x-api-key', '');
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'unauthorized']);
  });
});
