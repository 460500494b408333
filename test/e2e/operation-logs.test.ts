import type { Actor } from '@hearth/permissions';
import { accountsRepository } from '@hearth/persistence';
import {
  accountActor,
  createAccountWithKey,
  createClientWithKey,
  createOwnedSession,
  recordOperationLog,
  type AccountWithKey,
} from '../support/factories/accounts';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

const LOG_FIELDS = [
  'account_id',
  'action',
  'actor_account_id',
  'actor_id',
  'actor_type',
  'after_ref',
  'before_ref',
  'branch_id',
  'created_at',
  'diff',
  'floor_id',
  'id',
  'metadata',
  'operation_group_id',
  'project_id',
  'request_id',
  'run_id',
  'session_id',
  'source_type',
  'status',
  'target_id',
  'target_type',
  'workspace_id',
];

interface LogJson {
  id: string;
  account_id: string | null;
  action: string;
  created_at: number;
  [field: string]: unknown;
}

describe('operation-log read routes', () => {
  let t: TestApp;
  let alice: AccountWithKey;
  let bob: AccountWithKey;
  let aliceActor: Actor;
  let bobActor: Actor;

  const get = async (path: string, key: string, status = 200) => {
    const res = await t.http.get(path).set('x-api-key', key).expect(status);
    return res.body as { data: LogJson[]; meta: Record<string, unknown>; error?: { code: string } };
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { ACCOUNT_MODE: 'multi' } });
    alice = await createAccountWithKey(t, { name: 'Alice' });
    bob = await createAccountWithKey(t, { name: 'Bob' });
    aliceActor = accountActor(alice);
    bobActor = accountActor(bob);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists the caller’s rows newest first with the spec fields and meta', async () => {
    const carol = await createAccountWithKey(t);
    const actor = accountActor(carol);
    const first = await recordOperationLog(t, actor, { action: 'first_action' });
    const second = await recordOperationLog(t, actor, { action: 'second_action' });
    const third = await recordOperationLog(t, actor, { action: 'third_action' });

    const body = await get('/operation-logs', carol.apiKey);
    expect(body.data.map((r) => r.id)).toEqual([third.id, second.id, first.id]);
    expect(body.meta).toEqual({
      total: 3,
      limit: 50,
      offset: 0,
      has_more: false,
      sort_by: 'created_at',
      sort_order: 'desc',
    });
    expect(Object.keys(body.data[0]).sort()).toEqual(LOG_FIELDS);
    expect(body.data[0]).toMatchObject({
      account_id: carol.accountId,
      actor_type: 'account',
      actor_id: carol.accountId,
      actor_account_id: carol.accountId,
      action: 'third_action',
      status: 'succeeded',
      source_type: 'http',
    });

    const asc = await get('/operation-logs?sort_order=asc', carol.apiKey);
    expect(asc.data.map((r) => r.id)).toEqual([first.id, second.id, third.id]);
    expect(asc.meta.sort_order).toBe('asc');

    const page = await get('/operation-logs?limit=1&offset=1', carol.apiKey);
    expect(page.data.map((r) => r.id)).toEqual([second.id]);
    expect(page.meta).toMatchObject({ total: 3, limit: 1, offset: 1, has_more: true });
    const last = await get('/operation-logs?limit=1&offset=2', carol.apiKey);
    expect(last.meta.has_more).toBe(false);
  });

  it('shows each account only its own rows', async () => {
    const a = await recordOperationLog(t, aliceActor, { action: 'visibility_probe' });
    const b = await recordOperationLog(t, bobActor, { action: 'visibility_probe' });
    const asAlice = await get('/operation-logs?action=visibility_probe', alice.apiKey);
    const asBob = await get('/operation-logs?action=visibility_probe', bob.apiKey);
    expect(asAlice.data.map((r) => r.id)).toEqual([a.id]);
    expect(asBob.data.map((r) => r.id)).toEqual([b.id]);
    const all = await get('/operation-logs?limit=200', bob.apiKey);
    expect(all.data.every((r) => r.account_id === bob.accountId)).toBe(true);
    expect(all.data.map((r) => r.id)).not.toContain(a.id);
  });

  it('the admin does not see other accounts’ rows either', async () => {
    const a = await recordOperationLog(t, aliceActor, { action: 'admin_probe' });
    expect((await get('/operation-logs?action=admin_probe', ADMIN_KEY)).data).toEqual([]);
    expect((await get('/operation-logs?action=admin_probe', alice.apiKey)).data.map((r) => r.id)).toEqual([
      a.id,
    ]);
  });

  // Each filter: a matching row in Alice's log, a decoy in Alice's log, and the same value in Bob's log.
  const FILTERS: Array<[field: string, value: string]> = [
    ['workspace_id', 'ws_filter_probe'],
    ['project_id', 'prj_filter_probe'],
    ['session_id', 'ses_filter_probe'],
    ['floor_id', 'flr_filter_probe'],
    ['run_id', 'run_filter_probe'],
    ['target_type', 'filter_probe_target'],
    ['target_id', 'tgt_filter_probe'],
    ['action', 'filter_probe_action'],
    ['operation_group_id', 'opgrp_filter_probe'],
  ];

  it.each(FILTERS)('filters by %s, never widening to other accounts', async (field, value) => {
    const match = await recordOperationLog(t, aliceActor, { action: 'filter_probe_action', [field]: value });
    await recordOperationLog(t, aliceActor, { action: 'decoy', [field]: `${value}_other` });
    const bobRow = await recordOperationLog(t, bobActor, { action: 'filter_probe_action', [field]: value });

    const asAlice = await get(`/operation-logs?${field}=${value}&limit=200`, alice.apiKey);
    expect(asAlice.data.length).toBeGreaterThan(0);
    expect(asAlice.data.every((r) => r[field] === value && r.account_id === alice.accountId)).toBe(true);
    expect(asAlice.data.map((r) => r.id)).toContain(match.id);
    expect(asAlice.data.map((r) => r.id)).not.toContain(bobRow.id);
    expect(asAlice.meta.total).toBe(asAlice.data.length);

    const asBob = await get(`/operation-logs?${field}=${value}&limit=200`, bob.apiKey);
    expect(asBob.data.map((r) => r.id)).toContain(bobRow.id);
    expect(asBob.data.map((r) => r.id)).not.toContain(match.id);
  });

  it('filters by actor_account_id and actor_type', async () => {
    const dave = await createAccountWithKey(t);
    const daveActor = accountActor(dave);
    const sibling = await createClientWithKey(t, dave.accountId);
    const clientActor: Actor = {
      ...daveActor,
      kind: 'client',
      clientId: sibling.clientId,
      clientIsDefault: false,
    };
    const own = await recordOperationLog(t, daveActor, { action: 'by_account' });
    const byClient = await recordOperationLog(t, clientActor, { action: 'by_client' });
    // A row of Dave's data written by the admin (actor of another account) and one by the system.
    const byAdmin = await recordOperationLog(
      t,
      accountActor({ accountId: 'default', clientId: 'x' }, 'admin'),
      {
        action: 'by_admin',
        account_id: dave.accountId,
      },
    );
    const bySystem = await recordOperationLog(t, null, { action: 'by_system', account_id: dave.accountId });

    const ids = async (q: string) =>
      (await get(`/operation-logs?${q}`, dave.apiKey)).data.map((r) => r.id).sort();
    expect(await ids(`actor_account_id=${dave.accountId}`)).toEqual(
      [own.id, byClient.id, bySystem.id].sort(),
    );
    expect(await ids('actor_account_id=default')).toEqual([byAdmin.id]);
    expect(await ids('actor_type=client')).toEqual([byClient.id]);
    expect(await ids('actor_type=system')).toEqual([bySystem.id]);
    expect(await ids('actor_type=account')).toEqual([own.id, byAdmin.id].sort());
    // The admin's own log does not gain Dave's row through the filter.
    expect((await get(`/operation-logs?actor_account_id=default&action=by_admin`, ADMIN_KEY)).data).toEqual(
      [],
    );
    const row = (await get('/operation-logs?actor_type=client', dave.apiKey)).data[0];
    expect(row).toMatchObject({ actor_id: sibling.clientId, actor_account_id: dave.accountId });
  });

  it('filters by status', async () => {
    const denied = await recordOperationLog(t, aliceActor, { action: 'status_probe', status: 'denied' });
    await recordOperationLog(t, aliceActor, { action: 'status_probe', status: 'succeeded' });
    await recordOperationLog(t, bobActor, { action: 'status_probe', status: 'denied' });
    const res = await get('/operation-logs?status=denied&action=status_probe', alice.apiKey);
    expect(res.data.map((r) => r.id)).toEqual([denied.id]);
    expect((await get('/operation-logs?status=deleted', alice.apiKey, 400)).error!.code).toBe(
      'validation_error',
    );
  });

  it('filters by request_id, which real requests record', async () => {
    await t.http
      .post('/clients')
      .set('x-api-key', alice.apiKey)
      .set('x-request-id', 'trace-oplog-1')
      .send({ name: 'Traced' })
      .expect(201);
    await t.http
      .post('/clients')
      .set('x-api-key', alice.apiKey)
      .set('x-request-id', 'trace-oplog-2')
      .send({ name: 'Other' })
      .expect(201);
    const res = await get('/operation-logs?request_id=trace-oplog-1', alice.apiKey);
    expect(res.data).toHaveLength(1);
    expect(res.data[0]).toMatchObject({
      action: 'create_client',
      request_id: 'trace-oplog-1',
      target_type: 'client',
    });
    expect((await get('/operation-logs?request_id=trace-oplog-1', bob.apiKey)).data).toEqual([]);
  });

  it('combines filters with AND', async () => {
    const both = await recordOperationLog(t, aliceActor, {
      action: 'combo',
      target_type: 'combo_t',
      run_id: 'run_combo',
    });
    await recordOperationLog(t, aliceActor, { action: 'combo', target_type: 'combo_t', run_id: 'run_other' });
    await recordOperationLog(t, aliceActor, { action: 'combo', target_type: 'other_t', run_id: 'run_combo' });
    const res = await get('/operation-logs?action=combo&target_type=combo_t&run_id=run_combo', alice.apiKey);
    expect(res.data.map((r) => r.id)).toEqual([both.id]);
  });

  it('accepts limit 200 and rejects 201, 0, negatives and non-numbers (400 validation_error)', async () => {
    const erin = await createAccountWithKey(t);
    const actor = accountActor(erin);
    for (let i = 0; i < 201; i++) await recordOperationLog(t, actor, { action: 'bulk' });
    const page = await get('/operation-logs?limit=200', erin.apiKey);
    expect(page.data).toHaveLength(200);
    expect(page.meta).toMatchObject({ total: 201, limit: 200, has_more: true });
    for (const q of [
      'limit=201',
      'limit=0',
      'limit=-1',
      'limit=ten',
      'limit=1.5',
      'offset=-1',
      'sort_order=up',
      'unknown=1',
    ]) {
      expect((await get(`/operation-logs?${q}`, erin.apiKey, 400)).error!.code).toBe('validation_error');
    }
    expect((await get('/operation-logs?limit=200&offset=200', erin.apiKey)).data).toHaveLength(1);
    expect((await get('/operation-logs', erin.apiKey)).data).toHaveLength(50);
  });

  it('returns JSON columns parsed and masks sensitive fields', async () => {
    const row = await recordOperationLog(t, aliceActor, {
      action: 'masking_probe',
      before_ref: { id: 'x', name: 'before', api_key: 'hth_should_never_appear_1' },
      after_ref: { id: 'x', name: 'after', api_key: 'hth_should_never_appear_2' },
      metadata: {
        nested: { password: 'pw-should-never-appear', secret: 'sh-never' },
        count: 3,
        content: 'long message body',
      },
    });
    const res = await get('/operation-logs?action=masking_probe', alice.apiKey);
    expect(res.data.map((r) => r.id)).toEqual([row.id]);
    const log = res.data[0];
    expect(log.before_ref).toEqual({ id: 'x', name: 'before', api_key: '***' });
    expect(log.after_ref).toEqual({ id: 'x', name: 'after', api_key: '***' });
    expect(log.metadata).toEqual({
      nested: { password: '***', secret: '***' },
      count: 3,
      content: '[17 chars]',
    });
    // The diff names paths only, never values.
    expect(log.diff).toMatchObject({
      mode: 'summary',
      total_changes: 2,
      changes: [
        { path: 'api_key', change_type: 'changed' },
        { path: 'name', change_type: 'changed' },
      ],
    });
    const text = JSON.stringify(res);
    for (const secret of [
      'hth_should_never_appear',
      'pw-should-never-appear',
      'sh-never',
      'long message body',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it("a library write's row names the account's default Workspace, so a Workspace filter finds it", async () => {
    const book = await t.http
      .post('/import/worldbook')
      .set('x-api-key', alice.apiKey)
      .send({ name: 'Logged book', data: { entries: {} } });
    expect(book.status).toBe(201);
    const workspace = await accountsRepository.findDefaultWorkspace(t.resources.database.db, alice.accountId);
    const rows = (await get(`/operation-logs?target_id=${book.body.data.id}`, alice.apiKey)).data;
    expect(rows.map((r) => [r.action, r.workspace_id, r.project_id])).toEqual([
      ['import_worldbook', workspace!.id, null],
    ]);
    const filtered = (
      await get(`/operation-logs?workspace_id=${workspace!.id}&action=import_worldbook`, alice.apiKey)
    ).data;
    expect(filtered.map((r) => r.target_id)).toContain(book.body.data.id);
  });

  it('records account, Client and key operations without any key', async () => {
    const created = (
      await t.http.post('/accounts').set('x-api-key', ADMIN_KEY).send({ name: 'Logged' }).expect(201)
    ).body.data;
    await t.http
      .patch(`/accounts/${created.id}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ name: 'Logged 2', status: 'disabled' })
      .expect(200);
    const issued = (
      await t.http.post(`/accounts/${created.id}/api-keys`).set('x-api-key', ADMIN_KEY).expect(201)
    ).body.data;
    await t.http.delete(`/accounts/${created.id}`).set('x-api-key', ADMIN_KEY).expect(200);

    const rows = (await get(`/operation-logs?target_id=${created.id}&sort_order=asc`, ADMIN_KEY)).data;
    expect(rows.map((r) => r.action)).toEqual(['create_account', 'update_account', 'delete_account']);
    for (const r of rows)
      expect(r).toMatchObject({
        account_id: 'default',
        target_type: 'account',
        actor_type: 'account',
        status: 'succeeded',
      });
    expect(rows[0].after_ref).toEqual({
      id: created.id,
      name: 'Logged',
      role: 'user',
      status: 'active',
      is_default: false,
    });
    expect(rows[1].before_ref).toMatchObject({ name: 'Logged', status: 'active' });
    expect(rows[1].after_ref).toMatchObject({ name: 'Logged 2', status: 'disabled' });
    expect((rows[1].diff as { changes: unknown[] }).changes).toEqual([
      { path: 'name', change_type: 'changed' },
      { path: 'status', change_type: 'changed' },
    ]);
    expect(rows[2].before_ref).toMatchObject({ id: created.id, name: 'Logged 2' });

    const keyRows = (
      await get(`/operation-logs?action=issue_api_key&target_id=${issued.client_id}`, ADMIN_KEY)
    ).data;
    expect(keyRows).toHaveLength(1);
    expect(keyRows[0]).toMatchObject({ target_type: 'client', metadata: { target_account_id: created.id } });

    const client = (
      await t.http.post('/clients').set('x-api-key', alice.apiKey).send({ name: 'Keyed' }).expect(201)
    ).body.data;
    await t.http
      .patch(`/clients/${client.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ status: 'disabled' })
      .expect(200);
    const clientRows = (await get(`/operation-logs?target_id=${client.id}&sort_order=asc`, alice.apiKey))
      .data;
    expect(clientRows.map((r) => r.action)).toEqual(['create_client', 'update_client']);
    expect(clientRows[1]).toMatchObject({
      before_ref: { status: 'active' },
      after_ref: { status: 'disabled' },
    });

    const everything = JSON.stringify([
      (await get('/operation-logs?limit=200', ADMIN_KEY)).data,
      (await get('/operation-logs?limit=200', alice.apiKey)).data,
    ]);
    for (const key of [issued.api_key, client.api_key, alice.apiKey, ADMIN_KEY]) {
      expect(everything).not.toContain(key.slice(4));
    }
  });

  describe('GET /sessions/:id/operation-logs', () => {
    it('lists the caller’s rows of one of its sessions, with filters', async () => {
      const session = await createOwnedSession(t, alice.accountId);
      const a = await recordOperationLog(t, aliceActor, { action: 'update_session', session_id: session.id });
      const b = await recordOperationLog(t, aliceActor, {
        action: 'checkout_branch',
        session_id: session.id,
      });
      await recordOperationLog(t, aliceActor, { action: 'update_session', session_id: 'ses_elsewhere' });

      const res = await get(`/sessions/${session.id}/operation-logs`, alice.apiKey);
      expect(res.data.map((r) => r.id)).toEqual([b.id, a.id]);
      expect(res.meta).toMatchObject({ total: 2, sort_order: 'desc' });
      const filtered = await get(
        `/sessions/${session.id}/operation-logs?action=update_session`,
        alice.apiKey,
      );
      expect(filtered.data.map((r) => r.id)).toEqual([a.id]);
      expect(
        (await get(`/sessions/${session.id}/operation-logs?limit=201`, alice.apiKey, 400)).error!.code,
      ).toBe('validation_error');
      expect(
        (await get(`/sessions/${session.id}/operation-logs?session_id=x`, alice.apiKey, 400)).error!.code,
      ).toBe('validation_error');
    });

    it('answers an owned session with no rows with an empty list', async () => {
      const session = await createOwnedSession(t, alice.accountId);
      const res = await get(`/sessions/${session.id}/operation-logs`, alice.apiKey);
      expect(res.data).toEqual([]);
      expect(res.meta).toMatchObject({ total: 0, has_more: false });
    });

    it('answers 404 not_found for a missing session and for another account’s session', async () => {
      const bobs = await createOwnedSession(t, bob.accountId);
      await recordOperationLog(t, bobActor, { action: 'update_session', session_id: bobs.id });
      // Even a row of Alice's that names Bob's session does not open it.
      await recordOperationLog(t, aliceActor, { action: 'update_session', session_id: bobs.id });
      expect((await get(`/sessions/${bobs.id}/operation-logs`, alice.apiKey, 404)).error!.code).toBe(
        'not_found',
      );
      expect((await get('/sessions/ses_missing/operation-logs', alice.apiKey, 404)).error!.code).toBe(
        'not_found',
      );
      expect((await get(`/sessions/${bobs.id}/operation-logs`, bob.apiKey)).data).toHaveLength(1);
    });
  });

  describe('GET /floors/:id/operation-logs', () => {
    it('lists the caller’s rows of a floor, with filters', async () => {
      const a = await recordOperationLog(t, aliceActor, { action: 'edit_floor', floor_id: 'flr_alice_1' });
      const b = await recordOperationLog(t, aliceActor, { action: 'create_tag', floor_id: 'flr_alice_1' });
      await recordOperationLog(t, aliceActor, { action: 'edit_floor', floor_id: 'flr_alice_2' });
      const res = await get('/floors/flr_alice_1/operation-logs?sort_order=asc', alice.apiKey);
      expect(res.data.map((r) => r.id)).toEqual([a.id, b.id]);
      const filtered = await get('/floors/flr_alice_1/operation-logs?action=create_tag', alice.apiKey);
      expect(filtered.data.map((r) => r.id)).toEqual([b.id]);
      // A filter that leaves nothing is an empty list, not a 404: the floor is known.
      expect((await get('/floors/flr_alice_1/operation-logs?action=nothing', alice.apiKey)).data).toEqual([]);
      expect(
        (await get('/floors/flr_alice_1/operation-logs?floor_id=x', alice.apiKey, 400)).error!.code,
      ).toBe('validation_error');
    });

    it('answers 404 not_found for a floor the caller has no rows of, including another account’s', async () => {
      await recordOperationLog(t, bobActor, { action: 'edit_floor', floor_id: 'flr_bob_only' });
      expect((await get('/floors/flr_bob_only/operation-logs', alice.apiKey, 404)).error!.code).toBe(
        'not_found',
      );
      expect((await get('/floors/flr_missing/operation-logs', alice.apiKey, 404)).error!.code).toBe(
        'not_found',
      );
      expect((await get('/floors/flr_bob_only/operation-logs', bob.apiKey)).data).toHaveLength(1);
    });
  });
});
