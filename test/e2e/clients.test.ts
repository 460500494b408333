import {
  createAccountWithKey,
  createClientWithKey,
  type AccountWithKey,
} from '../support/factories/accounts';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

const CLIENT_FIELDS = ['account_id', 'created_at', 'id', 'is_default', 'name', 'status', 'updated_at'];

describe('Clients', () => {
  let t: TestApp;
  let alice: AccountWithKey;
  let bob: AccountWithKey;
  beforeAll(async () => {
    t = await startTestApp({ env: { ACCOUNT_MODE: 'multi' } });
    alice = await createAccountWithKey(t, { name: 'Alice' });
    bob = await createAccountWithKey(t, { name: 'Bob' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST /clients creates a non-default Client with a key shown once', async () => {
    const res = await t.http
      .post('/clients')
      .set('x-api-key', alice.apiKey)
      .send({ name: 'Mobile app' })
      .expect(201);
    const created = res.body.data;
    expect(created).toMatchObject({
      account_id: alice.accountId,
      name: 'Mobile app',
      status: 'active',
      is_default: false,
    });
    expect(created.id).toMatch(/^cli_/);
    expect(created.api_key).toMatch(/^hth_[A-Za-z0-9_-]{43}$/);
    expect(Object.keys(created).sort()).toEqual([...CLIENT_FIELDS, 'api_key'].sort());

    // The key works and acts as that Client; reads never show a key again.
    const own = await t.http.get(`/clients/${created.id}`).set('x-api-key', created.api_key).expect(200);
    expect(Object.keys(own.body.data).sort()).toEqual(CLIENT_FIELDS);
    expect(own.body.data.api_key).toBeUndefined();
    const list = await t.http.get('/clients').set('x-api-key', alice.apiKey).expect(200);
    for (const client of list.body.data) expect(client.api_key).toBeUndefined();
  });

  it('works in single mode too (any account)', async () => {
    const single = await startTestApp({ database: t.database! });
    try {
      const res = await single.http
        .post('/clients')
        .set('x-api-key', ADMIN_KEY)
        .send({ name: 'Single' })
        .expect(201);
      expect(res.body.data).toMatchObject({ account_id: 'default', is_default: false });
    } finally {
      await single.close();
    }
  });

  it('accepts a name of 120 characters and rejects 121, empty, blank and unknown fields', async () => {
    const ok = await t.http
      .post('/clients')
      .set('x-api-key', alice.apiKey)
      .send({ name: 'c'.repeat(120) })
      .expect(201);
    expect(ok.body.data.name).toHaveLength(120);
    const before = (await t.http.get('/clients').set('x-api-key', alice.apiKey).expect(200)).body.meta.total;
    for (const body of [
      { name: 'c'.repeat(121) },
      {},
      { name: '' },
      { name: '  ' },
      { name: 'x', is_default: true },
      { name: 7 },
    ]) {
      const res = await t.http.post('/clients').set('x-api-key', alice.apiKey).send(body).expect(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    expect((await t.http.get('/clients').set('x-api-key', alice.apiKey).expect(200)).body.meta.total).toBe(
      before,
    );
  });

  it('GET /clients lists the caller’s account’s Clients only, the default one first, with meta', async () => {
    const carol = await createAccountWithKey(t, { name: 'Carol' });
    const made = [];
    for (const name of ['one', 'two', 'three']) {
      made.push(
        (await t.http.post('/clients').set('x-api-key', carol.apiKey).send({ name }).expect(201)).body.data
          .id,
      );
    }
    const res = await t.http.get('/clients').set('x-api-key', carol.apiKey).expect(200);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([carol.clientId, ...made]);
    expect(res.body.data.every((c: { account_id: string }) => c.account_id === carol.accountId)).toBe(true);
    expect(res.body.meta).toMatchObject({ total: 4, limit: 50, offset: 0, has_more: false });

    const page = await t.http.get('/clients?limit=2&offset=1').set('x-api-key', carol.apiKey).expect(200);
    expect(page.body.data.map((c: { id: string }) => c.id)).toEqual(made.slice(0, 2));
    expect(page.body.meta).toMatchObject({ total: 4, limit: 2, offset: 1, has_more: true });
    for (const q of ['limit=0', 'limit=201', 'offset=-1', 'limit=abc', 'sort=name']) {
      expect(
        (await t.http.get(`/clients?${q}`).set('x-api-key', carol.apiKey).expect(400)).body.error.code,
      ).toBe('validation_error');
    }
    await t.http.get('/clients?limit=200').set('x-api-key', carol.apiKey).expect(200);
  });

  it('answers 404 not_found for a Client of another account on GET and PATCH, and changes nothing', async () => {
    const bobs = await t.http
      .post('/clients')
      .set('x-api-key', bob.apiKey)
      .send({ name: 'Bob’s' })
      .expect(201);
    for (const id of [bobs.body.data.id, bob.clientId, 'cli_missing']) {
      expect(
        (await t.http.get(`/clients/${id}`).set('x-api-key', alice.apiKey).expect(404)).body.error.code,
      ).toBe('not_found');
      const patch = await t.http
        .patch(`/clients/${id}`)
        .set('x-api-key', alice.apiKey)
        .send({ status: 'disabled' })
        .expect(404);
      expect(patch.body.error.code).toBe('not_found');
    }
    // Bob's Client is untouched and still works.
    const again = await t.http.get(`/clients/${bobs.body.data.id}`).set('x-api-key', bob.apiKey).expect(200);
    expect(again.body.data.status).toBe('active');
    await t.http.get('/clients').set('x-api-key', bobs.body.data.api_key).expect(200);
    // Not even the admin reads another account's Clients through /clients.
    expect(
      (await t.http.get(`/clients/${bob.clientId}`).set('x-api-key', ADMIN_KEY).expect(404)).body.error.code,
    ).toBe('not_found');
  });

  it('PATCH renames and disables a Client; its key then answers 403 client_disabled until re-enabled', async () => {
    const made = (
      await t.http.post('/clients').set('x-api-key', alice.apiKey).send({ name: 'Bot' }).expect(201)
    ).body.data;
    const renamed = await t.http
      .patch(`/clients/${made.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ name: 'Bot 2' })
      .expect(200);
    expect(renamed.body.data).toMatchObject({
      id: made.id,
      name: 'Bot 2',
      status: 'active',
      is_default: false,
    });
    expect(Object.keys(renamed.body.data).sort()).toEqual(CLIENT_FIELDS);

    const disabled = await t.http
      .patch(`/clients/${made.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ status: 'disabled' })
      .expect(200);
    expect(disabled.body.data.status).toBe('disabled');
    expect((await t.http.get('/clients').set('x-api-key', made.api_key).expect(403)).body.error.code).toBe(
      'client_disabled',
    );
    // The account and its other Clients are unaffected.
    await t.http.get('/clients').set('x-api-key', alice.apiKey).expect(200);

    await t.http
      .patch(`/clients/${made.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ status: 'active' })
      .expect(200);
    await t.http.get('/clients').set('x-api-key', made.api_key).expect(200);
  });

  it('refuses to disable the default Client (409 client_protected) but renames it', async () => {
    const res = await t.http
      .patch(`/clients/${alice.clientId}`)
      .set('x-api-key', alice.apiKey)
      .send({ status: 'disabled' })
      .expect(409);
    expect(res.body.error.code).toBe('client_protected');
    await t.http.get('/clients').set('x-api-key', alice.apiKey).expect(200);
    const renamed = await t.http
      .patch(`/clients/${alice.clientId}`)
      .set('x-api-key', alice.apiKey)
      .send({ name: 'Main' })
      .expect(200);
    expect(renamed.body.data).toMatchObject({ name: 'Main', status: 'active', is_default: true });
  });

  it('rejects a PATCH with no field, a bad status, a long name or an unknown field (400 validation_error)', async () => {
    const made = (
      await t.http.post('/clients').set('x-api-key', alice.apiKey).send({ name: 'Fixed' }).expect(201)
    ).body.data;
    for (const body of [
      {},
      { status: 'deleted' },
      { name: 'n'.repeat(121) },
      { is_default: true },
      { account_id: bob.accountId },
    ]) {
      const res = await t.http
        .patch(`/clients/${made.id}`)
        .set('x-api-key', alice.apiKey)
        .send(body)
        .expect(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    const ok = await t.http
      .patch(`/clients/${made.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ name: 'n'.repeat(120) })
      .expect(200);
    expect(ok.body.data.name).toHaveLength(120);
  });

  it('a non-default Client may list and read its account’s Clients but not create or change them (403 client_account_only)', async () => {
    const sibling = await createClientWithKey(t, alice.accountId, { name: 'Sibling' });
    const list = await t.http.get('/clients').set('x-api-key', sibling.apiKey).expect(200);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining([alice.clientId, sibling.clientId]),
    );
    await t.http.get(`/clients/${alice.clientId}`).set('x-api-key', sibling.apiKey).expect(200);

    const create = await t.http
      .post('/clients')
      .set('x-api-key', sibling.apiKey)
      .send({ name: 'Spawn' })
      .expect(403);
    expect(create.body.error.code).toBe('client_account_only');
    for (const id of [sibling.clientId, alice.clientId]) {
      const patch = await t.http
        .patch(`/clients/${id}`)
        .set('x-api-key', sibling.apiKey)
        .send({ name: 'Hijack' })
        .expect(403);
      expect(patch.body.error.code).toBe('client_account_only');
    }
    expect(
      (await t.http.get(`/clients/${sibling.clientId}`).set('x-api-key', alice.apiKey).expect(200)).body.data
        .name,
    ).toBe('Sibling');
  });
});
