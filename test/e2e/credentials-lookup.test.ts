import { hashApiKey } from '@hearth/domain';
import { CredentialLookup, credentialsRepository, migrateToLatest, openDatabase } from '@hearth/persistence';
import { createAccountWithKey, createClientWithKey } from '../support/factories/accounts';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

/** The key lookups of concurrent requests share statements (CredentialLookup, under the API-key cache). */
describe('API key lookups of concurrent requests', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ACCOUNT_MODE: 'multi' } });
  });
  afterAll(async () => {
    await t.close();
  });

  /** Valid, unknown, disabled-account and disabled-Client keys, with the answer each must get. */
  async function mixedKeys() {
    const active = await createAccountWithKey(t);
    const second = await createClientWithKey(t, active.accountId);
    const offClient = await createClientWithKey(t, active.accountId, { status: 'disabled' });
    const offAccount = await createAccountWithKey(t);
    await t.http
      .patch(`/accounts/${offAccount.accountId}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ status: 'disabled' })
      .expect(200);
    return [
      { key: ADMIN_KEY, status: 200, code: null },
      { key: active.apiKey, status: 200, code: null },
      { key: second.apiKey, status: 200, code: null },
      { key: 'hth_unknown_key_0000000000000000000000000', status: 401, code: 'unauthorized' },
      { key: offClient.apiKey, status: 403, code: 'client_disabled' },
      { key: offAccount.apiKey, status: 403, code: 'account_disabled' },
    ];
  }

  it('answers each of many concurrent requests with its own key’s answer', async () => {
    const cases = await mixedKeys();
    // 10 rounds of every key, all sent at once: most lookups wait for one in flight and share a statement.
    const requests = Array.from({ length: 10 }, () => cases).flat();
    const answers = await Promise.all(
      requests.map(async (c) => {
        const res = await fetch(`${t.baseUrl}/clients`, { headers: { 'x-api-key': c.key } });
        const body = (await res.json()) as { data?: unknown[]; error?: { code: string } };
        return { status: res.status, code: body.error?.code ?? null, listed: Array.isArray(body.data) };
      }),
    );
    answers.forEach((answer, i) => {
      expect({ key: i % cases.length, ...answer }).toEqual({
        key: i % cases.length,
        status: requests[i].status,
        code: requests[i].code,
        listed: requests[i].status === 200,
      });
    });
  });

  it('refuses a key whose Client was disabled between two requests, and its account’s afterwards', async () => {
    const user = await createAccountWithKey(t);
    const client = await createClientWithKey(t, user.accountId);
    await t.http.get('/clients').set('x-api-key', client.apiKey).expect(200);
    await t.http
      .patch(`/clients/${client.clientId}`)
      .set('x-api-key', user.apiKey)
      .send({ status: 'disabled' })
      .expect(200);
    expect((await t.http.get('/clients').set('x-api-key', client.apiKey).expect(403)).body.error.code).toBe(
      'client_disabled',
    );
    await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);
    await t.http
      .patch(`/accounts/${user.accountId}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ status: 'disabled' })
      .expect(200);
    expect((await t.http.get('/clients').set('x-api-key', user.apiKey).expect(403)).body.error.code).toBe(
      'account_disabled',
    );
  });

  describe('CredentialLookup', () => {
    it('looks up what arrived during a statement in one statement, each key its own row', async () => {
      const db = t.resources.database.db;
      const a = await createAccountWithKey(t);
      const b = await createClientWithKey(t, a.accountId, { status: 'disabled' });
      const lookup = new CredentialLookup(db);
      const hashes = [hashApiKey(a.apiKey), hashApiKey(b.apiKey), 'no-such-hash', hashApiKey(a.apiKey)];
      const rows = await Promise.all(hashes.map((h) => lookup.find(h)));
      expect(rows.map((r) => r && [r.client_id, r.client_status])).toEqual([
        [a.clientId, 'active'],
        [b.clientId, 'disabled'],
        undefined,
        [a.clientId, 'active'],
      ]);
      // Each answer is what the single lookup answers.
      for (const [i, h] of hashes.entries())
        expect(rows[i]).toEqual(await credentialsRepository.findByKeyHash(db, h));
      // Three distinct keys arrived in the same turn: one statement for the three.
      expect(lookup.stats).toMatchObject({ singles: 0, batches: 1, batchedKeys: 3, lookups: 4 });

      // A lone key: the single statement.
      expect((await lookup.find(hashApiKey(a.apiKey)))?.client_id).toBe(a.clientId);
      expect(lookup.stats.singles).toBe(1);
    });

    it('answers a key queued behind a statement in flight from a statement started after it', async () => {
      const db = t.resources.database.db;
      const user = await createAccountWithKey(t);
      const lookup = new CredentialLookup(db);
      const hash = hashApiKey(user.apiKey);
      const first = lookup.find(hash);
      // Let the first statement start, then disable the account while it may still be in flight.
      await new Promise((resolve) => setImmediate(resolve));
      await t.http
        .patch(`/accounts/${user.accountId}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'disabled' })
        .expect(200);
      const second = await lookup.find(hash);
      expect((await first)?.account_id).toBe(user.accountId);
      expect(second?.account_status).toBe('disabled');
    });
  });

  describe('CredentialLookup limits and failures', () => {
    it('puts at most maxBatch keys in a statement; the rest follow in the next ones', async () => {
      const users = await Promise.all([1, 2, 3, 4, 5].map(() => createAccountWithKey(t)));
      const lookup = new CredentialLookup(t.resources.database.db, { maxBatch: 2 });
      const rows = await Promise.all(users.map((u) => lookup.find(hashApiKey(u.apiKey))));
      expect(rows.map((r) => r?.account_id)).toEqual(users.map((u) => u.accountId));
      // 2 + 2 + 1: two several-key statements and a lone one.
      expect(lookup.stats).toMatchObject({ batches: 2, batchedKeys: 4, singles: 1, lookups: 5 });
    });

    it('fails every lookup of a failed statement with its error, the lone and the several-key one', async () => {
      const handle = await openDatabase({ url: null, dataDir: 'memory://' });
      await handle.close();
      const lookup = new CredentialLookup(handle.db);
      await expect(lookup.find('a')).rejects.toThrow();
      const both = await Promise.allSettled([lookup.find('a'), lookup.find('b')]);
      expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      expect(lookup.stats).toMatchObject({ singles: 1, batches: 1, lookups: 0 });
    });
  });

  it('runs the several-key statement on PGlite (embedded mode) too', async () => {
    const handle = await openDatabase({ url: null, dataDir: 'memory://' });
    try {
      await migrateToLatest(handle.db);
      const rows = await credentialsRepository.findByKeyHashes(handle.db, ['no-such-hash', 'another']);
      expect(rows.size).toBe(0);
      const lookup = new CredentialLookup(handle.db);
      expect(await Promise.all([lookup.find('a'), lookup.find('b')])).toEqual([undefined, undefined]);
      expect(lookup.stats.batches).toBe(1);
    } finally {
      await handle.close();
    }
  });
});
