import {
  createAccountWithKey,
  createClientWithKey,
  createOwnedProject,
  createOwnedSession,
} from '../support/factories/accounts';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';
import { createLlmProfile, createMcpServer, createToolPolicy } from '../support/factories/settings';

const ACCOUNT_FIELDS = ['created_at', 'id', 'is_default', 'name', 'role', 'status', 'updated_at'];

/** `details.resources` of 409 account_has_resources for an account that owns nothing. */
const NO_RESOURCES = {
  sessions: 0,
  projects: 0,
  llm_profiles: 0,
  mcp_servers: 0,
  tool_policies: 0,
  characters: 0,
  presets: 0,
  regex_profiles: 0,
  worldbooks: 0,
  user_cards: 0,
  vc_tags: 0,
};

describe('accounts, multi mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ACCOUNT_MODE: 'multi' } });
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = () => ({ 'x-api-key': ADMIN_KEY });

  it('lists every account, the default one first, with the spec fields', async () => {
    const other = await createAccountWithKey(t, { name: 'Listed' });
    const res = await t.http.get('/accounts').set(admin()).expect(200);
    expect(res.body.data[0]).toMatchObject({
      id: 'default',
      role: 'admin',
      status: 'active',
      is_default: true,
    });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(ACCOUNT_FIELDS);
    expect(res.body.data.map((a: { id: string }) => a.id)).toContain(other.accountId);
    expect(res.body.meta).toMatchObject({ limit: 50, offset: 0, has_more: false });
    expect(res.body.meta.total).toBe(res.body.data.length);
  });

  it('pages the list with limit and offset', async () => {
    const all = (await t.http.get('/accounts').set(admin()).expect(200)).body.data;
    const page = await t.http.get('/accounts?limit=1&offset=1').set(admin()).expect(200);
    expect(page.body.data).toEqual([all[1]]);
    expect(page.body.meta).toMatchObject({
      total: all.length,
      limit: 1,
      offset: 1,
      has_more: all.length > 2,
    });
    expect((await t.http.get('/accounts?limit=201').set(admin()).expect(400)).body.error.code).toBe(
      'validation_error',
    );
  });

  it('creates an account with a generated id, role user by default, and its default Client and Workspace', async () => {
    const res = await t.http.post('/accounts').set(admin()).send({ name: 'Alice' }).expect(201);
    const account = res.body.data;
    expect(account).toMatchObject({ name: 'Alice', role: 'user', status: 'active', is_default: false });
    expect(account.id).toMatch(/^acc_/);
    expect(Object.keys(account).sort()).toEqual(ACCOUNT_FIELDS);
    expect(typeof account.created_at).toBe('number');

    const detail = await t.http.get(`/accounts/${account.id}`).set(admin()).expect(200);
    expect(detail.body.data).toEqual(account);

    // The new account can be reached through a key for its default Client and sees that Client.
    const key = await t.http.post(`/accounts/${account.id}/api-keys`).set(admin()).expect(201);
    const clients = await t.http.get('/clients').set('x-api-key', key.body.data.api_key).expect(200);
    expect(clients.body.data).toEqual([
      expect.objectContaining({ id: key.body.data.client_id, is_default: true }),
    ]);
    // ... and is not an admin.
    const forbidden = await t.http.get('/accounts').set('x-api-key', key.body.data.api_key).expect(403);
    expect(forbidden.body.error.code).toBe('account_forbidden');
  });

  it('creates an account with a given id and role', async () => {
    const res = await t.http
      .post('/accounts')
      .set(admin())
      .send({ id: 'team-b', name: 'Team B', role: 'admin' })
      .expect(201);
    expect(res.body.data).toMatchObject({ id: 'team-b', name: 'Team B', role: 'admin' });
  });

  it('answers 409 account_conflict for an id that exists (and for the default account id)', async () => {
    await t.http.post('/accounts').set(admin()).send({ id: 'dup', name: 'One' }).expect(201);
    const res = await t.http.post('/accounts').set(admin()).send({ id: 'dup', name: 'Two' }).expect(409);
    expect(res.body.error.code).toBe('account_conflict');
    expect(
      (await t.http.post('/accounts').set(admin()).send({ id: 'default', name: 'X' }).expect(409)).body.error
        .code,
    ).toBe('account_conflict');
    const kept = await t.http.get('/accounts/dup').set(admin()).expect(200);
    expect(kept.body.data.name).toBe('One');
  });

  it('gives one of two concurrent creates of one id 201 and the other 409 account_conflict', async () => {
    const [a, b] = await Promise.all([
      t.http.post('/accounts').set(admin()).send({ id: 'race', name: 'A' }),
      t.http.post('/accounts').set(admin()).send({ id: 'race', name: 'B' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect([a, b].find((r) => r.status === 409)!.body.error.code).toBe('account_conflict');
  });

  it('accepts an id and a name of 120 characters and rejects 121', async () => {
    const id = 'i'.repeat(120);
    const name = 'n'.repeat(120);
    const ok = await t.http.post('/accounts').set(admin()).send({ id, name }).expect(201);
    expect(ok.body.data).toMatchObject({ id, name });

    const cases: Array<[Record<string, string>, string]> = [
      [{ id: 'j'.repeat(121), name: 'ok' }, 'id'],
      [{ name: 'n'.repeat(121) }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await t.http.post('/accounts').set(admin()).send(body).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    }
    expect(
      (
        await t.http
          .get('/accounts/' + 'j'.repeat(121))
          .set(admin())
          .expect(404)
      ).body.error.code,
    ).toBe('account_not_found');
  });

  it.each([
    ['an empty body', {}, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['an empty id', { id: '', name: 'x' }, 'id'],
    ['a bad role', { name: 'x', role: 'owner' }, 'role'],
    ['a numeric name', { name: 42 }, 'name'],
    ['an unknown field', { name: 'x', status: 'active' }, 'status'],
  ])('rejects POST with %s (400 validation_error naming the field)', async (_label, body, field) => {
    const before = (await t.http.get('/accounts?limit=200').set(admin()).expect(200)).body.meta.total;
    const res = await t.http.post('/accounts').set(admin()).send(body).expect(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect((await t.http.get('/accounts?limit=200').set(admin()).expect(200)).body.meta.total).toBe(before);
  });

  it('updates name, role and status and answers the full account', async () => {
    const { accountId } = await createAccountWithKey(t, { name: 'Before' });
    const res = await t.http
      .patch(`/accounts/${accountId}`)
      .set(admin())
      .send({ name: 'After', role: 'admin', status: 'disabled' })
      .expect(200);
    expect(res.body.data).toMatchObject({
      id: accountId,
      name: 'After',
      role: 'admin',
      status: 'disabled',
      is_default: false,
    });
    expect(Object.keys(res.body.data).sort()).toEqual(ACCOUNT_FIELDS);
    expect(res.body.data.updated_at).toBeGreaterThanOrEqual(res.body.data.created_at);
  });

  it.each([
    ['an empty body', {}],
    ['a name of 121 characters', { name: 'n'.repeat(121) }],
    ['an empty name', { name: '' }],
    ['a bad status', { status: 'deleted' }],
    ['a bad role', { role: 'root' }],
    ['an unknown field', { is_default: true }],
  ])('rejects PATCH with %s (400 validation_error)', async (_label, body) => {
    const { accountId } = await createAccountWithKey(t, { name: 'Unchanged' });
    const res = await t.http.patch(`/accounts/${accountId}`).set(admin()).send(body).expect(400);
    expect(res.body.error.code).toBe('validation_error');
    expect((await t.http.get(`/accounts/${accountId}`).set(admin()).expect(200)).body.data.name).toBe(
      'Unchanged',
    );
  });

  /** The account as an admin reads it, with the number of its operation logs. */
  const snapshotOf = async (accountId: string) => ({
    account: (await t.http.get(`/accounts/${accountId}`).set(admin()).expect(200)).body.data,
    logs: (await t.http.get(`/operation-logs?target_id=${accountId}&limit=200`).set(admin()).expect(200)).body
      .meta.total,
  });

  it.each([
    ['a null name', { name: null }, 'name'],
    ['a null role', { role: null }, 'role'],
    ['a null status', { status: null }, 'status'],
    ['a null name with a valid role', { name: null, role: 'admin' }, 'name'],
    ['a null status with a valid name', { name: 'Changed', status: null }, 'status'],
  ])(
    'rejects PATCH with %s (400 validation_error naming the field, nothing written)',
    async (_label, body, field) => {
      const { accountId } = await createAccountWithKey(t, { name: 'Unchanged' });
      const before = await snapshotOf(accountId);
      const res = await t.http.patch(`/accounts/${accountId}`).set(admin()).send(body).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
      expect(await snapshotOf(accountId)).toEqual(before);
    },
  );

  it.each([
    ['a null name', { name: null }, 'name'],
    ['a null role', { role: null }, 'role'],
    ['a null status', { status: null }, 'status'],
  ])(
    'rejects PATCH of the default account with %s (400 validation_error, not 409 or 500)',
    async (_label, body, field) => {
      const before = await snapshotOf('default');
      const res = await t.http.patch('/accounts/default').set(admin()).send(body).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
      expect(await snapshotOf('default')).toEqual(before);
    },
  );

  it('accepts a PATCH name of 120 characters', async () => {
    const { accountId } = await createAccountWithKey(t);
    const name = 'x'.repeat(120);
    expect(
      (await t.http.patch(`/accounts/${accountId}`).set(admin()).send({ name }).expect(200)).body.data.name,
    ).toBe(name);
  });

  it('protects the default account: role and status cannot change (409 account_protected), the name can', async () => {
    for (const body of [{ role: 'user' }, { status: 'disabled' }, { name: 'New name', status: 'disabled' }]) {
      const res = await t.http.patch('/accounts/default').set(admin()).send(body).expect(409);
      expect(res.body.error.code).toBe('account_protected');
    }
    const renamed = await t.http.patch('/accounts/default').set(admin()).send({ name: 'Owner' }).expect(200);
    expect(renamed.body.data).toMatchObject({
      id: 'default',
      name: 'Owner',
      role: 'admin',
      status: 'active',
    });
    // Restating the current role and status is not a change.
    await t.http
      .patch('/accounts/default')
      .set(admin())
      .send({ role: 'admin', status: 'active' })
      .expect(200);
    const del = await t.http.delete('/accounts/default').set(admin()).expect(409);
    expect(del.body.error.code).toBe('account_protected');
    await t.http.get('/accounts/default').set(admin()).expect(200);
  });

  it('rejects a path id over 200 characters with 400 validation_error', async () => {
    const res = await t.http
      .get(`/accounts/${'p'.repeat(201)}`)
      .set(admin())
      .expect(400);
    expect(res.body.error.code).toBe('validation_error');
  });

  it('answers 404 account_not_found for a missing account on every route', async () => {
    for (const call of [
      t.http.get('/accounts/nope'),
      t.http.patch('/accounts/nope').send({ name: 'x' }),
      t.http.delete('/accounts/nope'),
      t.http.post('/accounts/nope/api-keys'),
    ]) {
      const res = await call.set(admin()).expect(404);
      expect(res.body.error.code).toBe('account_not_found');
    }
  });

  it('deletes an account that owns nothing, with its Clients and keys (200 {id, deleted: true})', async () => {
    const victim = await createAccountWithKey(t, { name: 'Short-lived' });
    const extra = await createClientWithKey(t, victim.accountId);
    await t.http.get('/clients').set('x-api-key', extra.apiKey).expect(200);
    const res = await t.http.delete(`/accounts/${victim.accountId}`).set(admin()).expect(200);
    expect(res.body).toEqual({ data: { id: victim.accountId, deleted: true } });
    expect((await t.http.get(`/accounts/${victim.accountId}`).set(admin()).expect(404)).body.error.code).toBe(
      'account_not_found',
    );
    // Its keys are gone with it.
    for (const key of [victim.apiKey, extra.apiKey]) {
      expect((await t.http.get('/clients').set('x-api-key', key).expect(401)).body.error.code).toBe(
        'unauthorized',
      );
    }
    expect(
      (await t.http.delete(`/accounts/${victim.accountId}`).set(admin()).expect(404)).body.error.code,
    ).toBe('account_not_found');
  });

  it('refuses to delete an account that still owns a Project or a session (409 account_has_resources)', async () => {
    const withProject = await createAccountWithKey(t);
    await createOwnedProject(t, withProject.accountId);
    const res = await t.http.delete(`/accounts/${withProject.accountId}`).set(admin()).expect(409);
    expect(res.body.error.code).toBe('account_has_resources');
    expect(res.body.error.details.resources).toEqual({ ...NO_RESOURCES, projects: 1 });

    const withSession = await createAccountWithKey(t);
    await createOwnedSession(t, withSession.accountId);
    const res2 = await t.http.delete(`/accounts/${withSession.accountId}`).set(admin()).expect(409);
    expect(res2.body.error.code).toBe('account_has_resources');
    expect(res2.body.error.details.resources).toEqual({ ...NO_RESOURCES, sessions: 1, projects: 1 });

    // Nothing was deleted; the account still works.
    await t.http.get(`/accounts/${withSession.accountId}`).set(admin()).expect(200);
    await t.http.get('/clients').set('x-api-key', withSession.apiKey).expect(200);
  });

  it('counts model profiles, MCP servers and tool policies as resources that block the delete', async () => {
    const owner = await createAccountWithKey(t);
    await createLlmProfile(t, owner.accountId);
    await createMcpServer(t, owner.apiKey);
    await createToolPolicy(t, owner.apiKey);
    const res = await t.http.delete(`/accounts/${owner.accountId}`).set(admin()).expect(409);
    expect(res.body.error.code).toBe('account_has_resources');
    expect(res.body.error.details.resources).toEqual({
      ...NO_RESOURCES,
      llm_profiles: 1,
      mcp_servers: 1,
      tool_policies: 1,
    });
  });

  it('counts library assets that are not deleted as resources that block the delete', async () => {
    const owner = await createAccountWithKey(t);
    const as = (req: import('supertest').Test) => req.set('x-api-key', owner.apiKey);
    const preset = await as(t.http.post('/import/preset'))
      .send({ data: { prompts: [] } })
      .expect(201);
    const regex = await as(t.http.post('/import/regex'))
      .send({ name: 'r', data: [{ scriptName: 's', findRegex: 'a', replaceString: 'b', placement: [2] }] })
      .expect(201);
    const character = await as(t.http.post('/import/character'))
      .send({
        create_session: false,
        payload: { spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'C' } },
      })
      .expect(201);
    const user = await as(t.http.post('/users'))
      .send({ snapshot: { name: 'Me' } })
      .expect(201);
    const blocked = await t.http.delete(`/accounts/${owner.accountId}`).set(admin()).expect(409);
    expect(blocked.body.error.details.resources).toEqual({
      ...NO_RESOURCES,
      presets: 1,
      regex_profiles: 1,
      characters: 1,
      user_cards: 1,
    });
    // Soft-deleted assets no longer count.
    await as(t.http.delete(`/presets/${preset.body.data.id}`)).expect(200);
    await as(t.http.delete(`/regex-profiles/${regex.body.data.id}`)).expect(200);
    await as(t.http.delete(`/characters/${character.body.data.character_id}`)).expect(200);
    await as(t.http.delete(`/users/${user.body.data.id}`)).expect(200);
    await t.http.delete(`/accounts/${owner.accountId}`).set(admin()).expect(200);
  });

  it('answers 403 account_forbidden to non-admins on every account route', async () => {
    const user = await createAccountWithKey(t, { role: 'user' });
    for (const call of [
      () => t.http.get('/accounts'),
      () => t.http.post('/accounts').send({ name: 'x' }),
      () => t.http.get(`/accounts/${user.accountId}`),
      () => t.http.patch(`/accounts/${user.accountId}`).send({ role: 'admin' }),
      () => t.http.delete(`/accounts/${user.accountId}`),
      () => t.http.post(`/accounts/${user.accountId}/api-keys`),
    ]) {
      const res = await call().set('x-api-key', user.apiKey).expect(403);
      expect(res.body.error.code).toBe('account_forbidden');
    }
    // The user did not promote itself.
    expect((await t.http.get(`/accounts/${user.accountId}`).set(admin()).expect(200)).body.data.role).toBe(
      'user',
    );
  });

  it('answers 403 account_forbidden to non-admins before validating the path, query or body', async () => {
    const user = await createAccountWithKey(t, { role: 'user' });
    const client = await createClientWithKey(t, 'default');
    const total = async () =>
      (await t.http.get('/accounts?limit=200').set(admin()).expect(200)).body.meta.total;
    const accountsBefore = await total();
    const defaultBefore = await snapshotOf('default');
    const userBefore = await snapshotOf(user.accountId);
    for (const key of [user.apiKey, client.apiKey]) {
      for (const call of [
        () => t.http.post('/accounts').send({}),
        () => t.http.post('/accounts').send({ name: 'x', role: 'root' }),
        () => t.http.get('/accounts?limit=500'),
        () => t.http.get('/accounts?offset=-1'),
        () => t.http.get(`/accounts/${'p'.repeat(201)}`),
        () => t.http.patch('/accounts/default').send({ foo: 1 }),
        () => t.http.patch('/accounts/default').send({}),
        () => t.http.patch('/accounts/default').send({ name: null }),
        () => t.http.patch(`/accounts/${user.accountId}`).send({ role: 'root' }),
        () => t.http.delete(`/accounts/${'p'.repeat(201)}`),
        () => t.http.post(`/accounts/${'p'.repeat(201)}/api-keys`),
      ]) {
        const res = await call().set('x-api-key', key);
        expect([res.status, res.body.error?.code]).toEqual([403, 'account_forbidden']);
      }
    }
    expect(await total()).toBe(accountsBefore);
    expect(await snapshotOf('default')).toEqual(defaultBefore);
    expect(await snapshotOf(user.accountId)).toEqual(userBefore);
  });

  it('keeps answering 400 validation_error to admins for the same requests', async () => {
    for (const call of [
      () => t.http.post('/accounts').send({}),
      () => t.http.get('/accounts?limit=500'),
      () => t.http.patch('/accounts/default').send({ foo: 1 }),
      () => t.http.patch('/accounts/default').send({}),
    ]) {
      const res = await call().set(admin());
      expect([res.status, res.body.error?.code]).toEqual([400, 'validation_error']);
    }
  });

  it('answers 403 account_forbidden to a non-default Client, even of an admin account', async () => {
    const client = await createClientWithKey(t, 'default');
    const res = await t.http.get('/accounts').set('x-api-key', client.apiKey).expect(403);
    expect(res.body.error.code).toBe('account_forbidden');
  });

  it('lets a second admin account manage accounts', async () => {
    const second = await createAccountWithKey(t, { role: 'admin' });
    const res = await t.http
      .post('/accounts')
      .set('x-api-key', second.apiKey)
      .send({ name: 'Made by second' })
      .expect(201);
    await t.http.delete(`/accounts/${res.body.data.id}`).set('x-api-key', second.apiKey).expect(200);
  });

  it('a disabled account reaches nothing (403 account_disabled), and re-enabling restores access', async () => {
    const user = await createAccountWithKey(t);
    const sibling = await createClientWithKey(t, user.accountId);
    await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);

    await t.http.patch(`/accounts/${user.accountId}`).set(admin()).send({ status: 'disabled' }).expect(200);
    for (const key of [user.apiKey, sibling.apiKey]) {
      for (const call of [
        () => t.http.get('/clients'),
        () => t.http.post('/clients').send({ name: 'x' }),
        () => t.http.get(`/clients/${user.clientId}`),
        () => t.http.get('/operation-logs'),
        () => t.http.get('/accounts'),
        () => t.http.get(`/accounts/${user.accountId}`),
      ]) {
        const res = await call().set('x-api-key', key).expect(403);
        expect(res.body.error.code).toBe('account_disabled');
      }
    }
    // An admin issuing a new key does not bypass it.
    const fresh = await t.http.post(`/accounts/${user.accountId}/api-keys`).set(admin()).expect(201);
    expect(
      (await t.http.get('/clients').set('x-api-key', fresh.body.data.api_key).expect(403)).body.error.code,
    ).toBe('account_disabled');

    await t.http.patch(`/accounts/${user.accountId}`).set(admin()).send({ status: 'active' }).expect(200);
    await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);
    await t.http.get('/clients').set('x-api-key', sibling.apiKey).expect(200);
    await t.http.get('/clients').set('x-api-key', fresh.body.data.api_key).expect(200);
  });

  it('a disabled admin account loses the account routes too', async () => {
    const second = await createAccountWithKey(t, { role: 'admin' });
    await t.http.patch(`/accounts/${second.accountId}`).set(admin()).send({ status: 'disabled' }).expect(200);
    expect((await t.http.get('/accounts').set('x-api-key', second.apiKey).expect(403)).body.error.code).toBe(
      'account_disabled',
    );
  });

  it('issues API keys for an account’s default Client, each shown once and each valid', async () => {
    const user = await createAccountWithKey(t);
    const a = await t.http.post(`/accounts/${user.accountId}/api-keys`).set(admin()).expect(201);
    const b = await t.http.post(`/accounts/${user.accountId}/api-keys`).set(admin()).expect(201);
    expect(Object.keys(a.body.data).sort()).toEqual(['api_key', 'client_id']);
    expect(a.body.data.client_id).toBe(user.clientId);
    expect(a.body.data.api_key).not.toBe(b.body.data.api_key);
    for (const key of [user.apiKey, a.body.data.api_key, b.body.data.api_key]) {
      const me = await t.http.get(`/clients/${user.clientId}`).set('x-api-key', key).expect(200);
      expect(me.body.data).toMatchObject({ id: user.clientId, account_id: user.accountId, is_default: true });
      expect(me.body.data.api_key).toBeUndefined();
    }
  });
});

describe('accounts, single mode (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = () => ({ 'x-api-key': ADMIN_KEY });

  it('runs in single mode by default', () => {
    expect(t.config.accountMode).toBe('single');
  });

  it('lists only the default account, even when others exist', async () => {
    await createAccountWithKey(t, { name: 'Hidden' });
    const res = await t.http.get('/accounts').set(admin()).expect(200);
    expect(res.body.data).toEqual([
      expect.objectContaining({ id: 'default', is_default: true, role: 'admin' }),
    ]);
    expect(res.body.meta).toMatchObject({ total: 1, has_more: false });
  });

  it('shows the default account and answers 404 account_not_found for any other id', async () => {
    const other = await createAccountWithKey(t);
    await t.http.get('/accounts/default').set(admin()).expect(200);
    expect((await t.http.get(`/accounts/${other.accountId}`).set(admin()).expect(404)).body.error.code).toBe(
      'account_not_found',
    );
    expect(
      (await t.http.post(`/accounts/${other.accountId}/api-keys`).set(admin()).expect(404)).body.error.code,
    ).toBe('account_not_found');
  });

  it('answers 409 account_mode_restricted to create, update and delete', async () => {
    const other = await createAccountWithKey(t);
    for (const call of [
      () => t.http.post('/accounts').send({ name: 'New' }),
      () => t.http.patch('/accounts/default').send({ name: 'Renamed' }),
      () => t.http.patch(`/accounts/${other.accountId}`).send({ status: 'disabled' }),
      () => t.http.delete(`/accounts/${other.accountId}`),
      () => t.http.delete('/accounts/default'),
    ]) {
      const res = await call().set(admin()).expect(409);
      expect(res.body.error.code).toBe('account_mode_restricted');
    }
    expect((await t.http.get('/accounts/default').set(admin()).expect(200)).body.data.name).toBe(
      'Default account',
    );
    await t.http.get('/clients').set('x-api-key', other.apiKey).expect(200);
  });

  it('still answers 403 account_forbidden to non-admins before the mode', async () => {
    const user = await createAccountWithKey(t);
    expect(
      (await t.http.post('/accounts').set('x-api-key', user.apiKey).send({ name: 'x' }).expect(403)).body
        .error.code,
    ).toBe('account_forbidden');
  });

  it('checks admin (403), then the body (400), then the mode (409)', async () => {
    const user = await createAccountWithKey(t);
    for (const call of [
      () => t.http.post('/accounts').send({}),
      () => t.http.patch('/accounts/default').send({}),
      () => t.http.patch('/accounts/default').send({ name: null }),
      () => t.http.patch('/accounts/default').send({ foo: 1 }),
    ]) {
      const forbidden = await call().set('x-api-key', user.apiKey);
      expect([forbidden.status, forbidden.body.error?.code]).toEqual([403, 'account_forbidden']);
      const invalid = await call().set(admin());
      expect([invalid.status, invalid.body.error?.code]).toEqual([400, 'validation_error']);
    }
    const restricted = await t.http.patch('/accounts/default').set(admin()).send({ name: 'Renamed' });
    expect([restricted.status, restricted.body.error?.code]).toEqual([409, 'account_mode_restricted']);
    expect((await t.http.get('/accounts/default').set(admin()).expect(200)).body.data.name).toBe(
      'Default account',
    );
  });

  it('issues a key for the default account', async () => {
    const res = await t.http.post('/accounts/default/api-keys').set(admin()).expect(201);
    const accounts = await t.http.get('/accounts').set('x-api-key', res.body.data.api_key).expect(200);
    expect(accounts.body.data[0].id).toBe('default');
  });
});

describe('accounts and Clients on the embedded adapters (PGlite, in-process bus)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ embedded: true, env: { ACCOUNT_MODE: 'multi' } });
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = () => ({ 'x-api-key': ADMIN_KEY });

  it('creates, conflicts, disables, issues keys, deletes and logs the same way', async () => {
    expect(t.resources.database.kind).toBe('pglite');
    await t.http.post('/accounts').set(admin()).send({ id: 'emb', name: 'Embedded' }).expect(201);
    expect(
      (await t.http.post('/accounts').set(admin()).send({ id: 'emb', name: 'Again' }).expect(409)).body.error
        .code,
    ).toBe('account_conflict');
    const key = (await t.http.post('/accounts/emb/api-keys').set(admin()).expect(201)).body.data.api_key;
    const client = await t.http
      .post('/clients')
      .set('x-api-key', key)
      .send({ name: 'Embedded client' })
      .expect(201);
    await t.http.get('/clients').set('x-api-key', client.body.data.api_key).expect(200);

    await createOwnedProject(t, 'emb');
    expect((await t.http.delete('/accounts/emb').set(admin()).expect(409)).body.error.code).toBe(
      'account_has_resources',
    );

    await t.http.patch('/accounts/emb').set(admin()).send({ status: 'disabled' }).expect(200);
    expect((await t.http.get('/clients').set('x-api-key', key).expect(403)).body.error.code).toBe(
      'account_disabled',
    );

    const logs = await t.http.get('/operation-logs?target_id=emb&sort_order=asc').set(admin()).expect(200);
    expect(logs.body.data.map((r: { action: string }) => r.action)).toEqual([
      'create_account',
      'update_account',
    ]);
    expect(logs.body.data[0].after_ref).toMatchObject({ id: 'emb', name: 'Embedded' });
  });
});
