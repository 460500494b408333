import { hashApiKey } from '@hearth/domain';
import { allApiKeyRows, createAccountWithKey, createClientWithKey } from '../support/factories/accounts';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

describe('credentials (x-api-key)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ACCOUNT_MODE: 'multi' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 401 unauthorized without a key, with an empty key and with an unknown key', async () => {
    for (const headers of [
      {},
      { 'x-api-key': '' },
      { 'x-api-key': '   ' },
      { 'x-api-key': 'hth_not_a_real_key_at_all_000000000000' },
    ]) {
      for (const path of ['/clients', '/accounts', '/operation-logs']) {
        const res = await t.http.get(path).set(headers).expect(401);
        expect(res.body.error.code).toBe('unauthorized');
        expect(typeof res.body.error.message).toBe('string');
      }
    }
  });

  it('does not accept the key’s hash, or the key in another header, as a key', async () => {
    const stored = (await allApiKeyRows(t)).find((r) => r.key_hash === hashApiKey(ADMIN_KEY))!;
    expect((await t.http.get('/clients').set('x-api-key', stored.key_hash).expect(401)).body.error.code).toBe(
      'unauthorized',
    );
    expect(
      (await t.http.get('/clients').set('authorization', `Bearer ${ADMIN_KEY}`).expect(401)).body.error.code,
    ).toBe('unauthorized');
  });

  it('keeps the operational routes open without a key', async () => {
    await t.http.get('/health').expect(200);
    await t.http.get('/health/ready').expect(200);
    await t.http.get('/metrics').expect(200);
    await t.http.get('/openapi.json').expect(200);
  });

  it('lists the account, Client and operation-log routes in the OpenAPI document', async () => {
    const doc = await t.http.get('/openapi.json').expect(200);
    for (const path of [
      '/accounts',
      '/accounts/{id}',
      '/accounts/{id}/api-keys',
      '/clients',
      '/clients/{id}',
      '/operation-logs',
      '/sessions/{id}/operation-logs',
      '/floors/{id}/operation-logs',
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(path);
    }
  });

  it('answers 403 account_disabled for a key of a disabled account, on every Client of it', async () => {
    const user = await createAccountWithKey(t);
    const other = await createClientWithKey(t, user.accountId);
    await t.http
      .patch(`/accounts/${user.accountId}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ status: 'disabled' })
      .expect(200);
    for (const key of [user.apiKey, other.apiKey]) {
      expect((await t.http.get('/clients').set('x-api-key', key).expect(403)).body.error.code).toBe(
        'account_disabled',
      );
    }
  });

  it('answers 403 client_disabled for a key of a disabled Client; account_disabled wins when both are', async () => {
    const user = await createAccountWithKey(t);
    const off = await createClientWithKey(t, user.accountId, { status: 'disabled' });
    expect((await t.http.get('/clients').set('x-api-key', off.apiKey).expect(403)).body.error.code).toBe(
      'client_disabled',
    );
    await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);
    await t.http
      .patch(`/accounts/${user.accountId}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ status: 'disabled' })
      .expect(200);
    expect((await t.http.get('/clients').set('x-api-key', off.apiKey).expect(403)).body.error.code).toBe(
      'account_disabled',
    );
  });

  it('stores keys only as hashes: no plaintext in the key table, the operation logs or the log output', async () => {
    const account = (
      await t.http.post('/accounts').set('x-api-key', ADMIN_KEY).send({ name: 'Hashes' }).expect(201)
    ).body.data;
    const issued = (
      await t.http.post(`/accounts/${account.id}/api-keys`).set('x-api-key', ADMIN_KEY).expect(201)
    ).body.data;
    const client = (
      await t.http.post('/clients').set('x-api-key', issued.api_key).send({ name: 'Hashed' }).expect(201)
    ).body.data;
    const plaintexts: string[] = [issued.api_key, client.api_key, ADMIN_KEY];

    const rows = await allApiKeyRows(t);
    const dump = JSON.stringify(rows);
    for (const key of plaintexts) {
      expect(dump).not.toContain(key);
      // The body after the prefix is nowhere either (not even a fragment past the short prefix).
      expect(dump).not.toContain(key.slice(8));
      const row = rows.find((r) => r.key_hash === hashApiKey(key));
      expect(row).toBeDefined();
      expect(row!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(rows.find((r) => r.key_hash === hashApiKey(issued.api_key))!.client_id).toBe(issued.client_id);
    expect(rows.find((r) => r.key_hash === hashApiKey(client.api_key))!.client_id).toBe(client.id);

    const logs = JSON.stringify(
      (await t.http.get('/operation-logs?limit=200').set('x-api-key', ADMIN_KEY).expect(200)).body.data,
    );
    const ownLogs = JSON.stringify(
      (await t.http.get('/operation-logs?limit=200').set('x-api-key', issued.api_key).expect(200)).body.data,
    );
    for (const key of plaintexts) {
      expect(logs).not.toContain(key.slice(4));
      expect(ownLogs).not.toContain(key.slice(4));
      expect(t.logs.join('\n')).not.toContain(key.slice(4));
    }
  });
});
