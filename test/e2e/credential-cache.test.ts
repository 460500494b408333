import { hashApiKey } from '@hearth/domain';
import { CredentialCache, migrateToLatest, openDatabase, type DatabaseHandle } from '@hearth/persistence';
import { sql } from 'kysely';
import {
  createAccountWithKey,
  createClientWithKey,
  type AccountWithKey,
} from '../support/factories/accounts';
import { eventually } from '../support/poll';
import { withAdminClient } from '../support/postgres-admin';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The API-key cache (CredentialCache): found keys are kept while the database's credential-change
 * notifications arrive, and dropped on each of them and on a local change; without the
 * notifications every lookup reads the database.
 */
describe('API-key cache', () => {
  let t: TestApp;
  let cache: CredentialCache;
  beforeAll(async () => {
    t = await startTestApp({ env: { ACCOUNT_MODE: 'multi' } });
    cache = t.resources.credentials;
  });
  afterAll(async () => {
    await t.close();
  });

  const statusOf = async (key: string) => {
    const res = await t.http.get('/clients').set('x-api-key', key);
    return { status: res.status, code: (res.body as { error?: { code: string } }).error?.code ?? null };
  };

  /** The key answers 200 and its row is cached (the second request is a hit). */
  async function warm(user: AccountWithKey | { apiKey: string }): Promise<void> {
    await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);
    expect(await eventually(() => cache.isLive)).toBe(true);
    await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);
    const hits = cache.stats.hits;
    await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);
    expect(cache.stats.hits).toBe(hits + 1);
  }

  it('answers a known key from the cache, without a statement', async () => {
    const user = await createAccountWithKey(t);
    await warm(user);
    const statements = cache.lookup.stats.singles + cache.lookup.stats.batches;
    for (let i = 0; i < 5; i++) await t.http.get('/clients').set('x-api-key', user.apiKey).expect(200);
    expect(cache.lookup.stats.singles + cache.lookup.stats.batches).toBe(statements);
  });

  it('never caches an unknown key: one created afterwards is accepted at once', async () => {
    const misses = cache.stats.misses;
    expect(await statusOf('hth_not_yet_known_000000000000000000000000')).toEqual({
      status: 401,
      code: 'unauthorized',
    });
    expect(await statusOf('hth_not_yet_known_000000000000000000000000')).toEqual({
      status: 401,
      code: 'unauthorized',
    });
    expect(cache.stats.misses).toBe(misses + 2);
    const user = await createAccountWithKey(t);
    expect(await statusOf(user.apiKey)).toEqual({ status: 200, code: null });
  });

  it('refuses a cached key on the next request once the API disabled its Client or account', async () => {
    const user = await createAccountWithKey(t);
    const client = await createClientWithKey(t, user.accountId);
    await warm(client);
    await t.http
      .patch(`/clients/${client.clientId}`)
      .set('x-api-key', user.apiKey)
      .send({ status: 'disabled' })
      .expect(200);
    expect(await statusOf(client.apiKey)).toEqual({ status: 403, code: 'client_disabled' });

    await warm(user);
    await t.http
      .patch(`/accounts/${user.accountId}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ status: 'disabled' })
      .expect(200);
    expect(await statusOf(user.apiKey)).toEqual({ status: 403, code: 'account_disabled' });
  });

  it('takes a role change on the next request, and forgets the keys of a deleted account', async () => {
    const user = await createAccountWithKey(t);
    await warm(user);
    await t.http.get('/accounts').set('x-api-key', user.apiKey).expect(403);
    await t.http
      .patch(`/accounts/${user.accountId}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ role: 'admin' })
      .expect(200);
    await t.http.get('/accounts').set('x-api-key', user.apiKey).expect(200);

    const doomed = await createAccountWithKey(t);
    await warm(doomed);
    await t.http.delete(`/accounts/${doomed.accountId}`).set('x-api-key', ADMIN_KEY).expect(200);
    expect(await statusOf(doomed.apiKey)).toEqual({ status: 401, code: 'unauthorized' });
  });

  it('drops the cache on the notification of a change made outside the API (SQL, another process)', async () => {
    const user = await createAccountWithKey(t);
    const client = await createClientWithKey(t, user.accountId);
    await warm(client);
    const db = t.resources.database.db;
    const invalidations = cache.stats.invalidations;
    await db.updateTable('clients').set({ status: 'disabled' }).where('id', '=', client.clientId).execute();
    expect(await eventually(() => cache.stats.invalidations > invalidations)).toBe(true);
    expect(await statusOf(client.apiKey)).toEqual({ status: 403, code: 'client_disabled' });

    await db.updateTable('clients').set({ status: 'active' }).where('id', '=', client.clientId).execute();
    expect(await eventually(async () => (await statusOf(client.apiKey)).status === 200)).toBe(true);
    await warm(client);
    const before = cache.stats.invalidations;
    await db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('client_id', '=', client.clientId)
      .execute();
    expect(await eventually(() => cache.stats.invalidations > before)).toBe(true);
    expect(await statusOf(client.apiKey)).toEqual({ status: 401, code: 'unauthorized' });
  });

  it('is not told of changes that cannot affect a lookup (a rename, a new key)', async () => {
    const user = await createAccountWithKey(t);
    await warm(user);
    const invalidations = cache.stats.invalidations;
    await t.resources.database.db
      .updateTable('accounts')
      .set({ name: 'renamed by SQL' })
      .where('id', '=', user.accountId)
      .execute();
    await createClientWithKey(t, user.accountId);
    // A notification would have arrived by the time a later one does: send one and wait for it.
    await sql`SELECT pg_notify('hearth_credentials', 'probe')`.execute(t.resources.database.db);
    expect(await eventually(() => cache.stats.invalidations > invalidations)).toBe(true);
    expect(cache.stats.invalidations).toBe(invalidations + 1);
  });

  it('reads the database while its LISTEN connection is lost, and caches again once it is back', async () => {
    const user = await createAccountWithKey(t);
    const client = await createClientWithKey(t, user.accountId);
    await warm(client);
    await withAdminClient((admin) =>
      admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = $1 AND query ILIKE 'LISTEN %'`,
        [t.database!.name],
      ),
    );
    expect(await eventually(() => !cache.isLive)).toBe(true);
    // The change is seen at once, notification or not: without the LISTEN nothing is cached, and
    // regaining it (after 250 ms) clears the cache.
    await t.resources.database.db
      .updateTable('clients')
      .set({ status: 'disabled' })
      .where('id', '=', client.clientId)
      .execute();
    const misses = cache.stats.misses;
    expect(await statusOf(client.apiKey)).toEqual({ status: 403, code: 'client_disabled' });
    expect(cache.stats.misses).toBe(misses + 1);
    expect(await eventually(() => cache.isLive, 5000)).toBe(true);
    expect(await statusOf(client.apiKey)).toEqual({ status: 403, code: 'client_disabled' });
    await warm(user);
  });

  describe('CredentialCache rules', () => {
    let handle: DatabaseHandle;
    let users: AccountWithKey[];
    beforeAll(async () => {
      handle = await openDatabase({ url: t.database!.url });
      users = await Promise.all([1, 2, 3].map(() => createAccountWithKey(t)));
    });
    afterAll(async () => {
      await handle.close();
    });

    async function liveCache(options: ConstructorParameters<typeof CredentialCache>[1]) {
      const own = new CredentialCache(handle, options);
      await own.find('start-listening');
      expect(await eventually(() => own.isLive)).toBe(true);
      return own;
    }

    it('keeps no answer of a lookup that an invalidation overtook', async () => {
      const own = await liveCache({});
      const hash = hashApiKey(users[0].apiKey);
      const pending = own.find(hash);
      own.invalidate();
      expect((await pending)?.account_id).toBe(users[0].accountId);
      const misses = own.stats.misses;
      await own.find(hash);
      expect(own.stats.misses).toBe(misses + 1);
      await own.find(hash);
      expect(own.stats).toMatchObject({ misses: misses + 1 });
      await own.close();
    });

    it('holds at most maxEntries keys, dropping the oldest, and looks an entry up again after maxAgeMs', async () => {
      const own = await liveCache({ maxEntries: 2, maxAgeMs: 200 });
      const [a, b, c] = users.map((u) => hashApiKey(u.apiKey));
      await own.find(a);
      await own.find(b);
      await own.find(c);
      const misses = own.stats.misses;
      await own.find(b);
      await own.find(c);
      expect(own.stats.misses).toBe(misses);
      await own.find(a);
      expect(own.stats.misses).toBe(misses + 1);
      await sleep(250);
      await own.find(a);
      expect(own.stats.misses).toBe(misses + 2);
      await own.close();
      expect(own.isLive).toBe(false);
    });

    it('counts a key looked up again after maxAgeMs as the newest entry', async () => {
      const own = await liveCache({ maxEntries: 2, maxAgeMs: 200 });
      const [a, b, c] = users.map((u) => hashApiKey(u.apiKey));
      await own.find(a);
      await own.find(b);
      await sleep(250);
      await own.find(a);
      // The cache is full: c takes the place of b, the older entry now.
      await own.find(c);
      const misses = own.stats.misses;
      await own.find(a);
      await own.find(c);
      expect(own.stats.misses).toBe(misses);
      await own.find(b);
      expect(own.stats.misses).toBe(misses + 1);
      await own.close();
    });

    it('caches nothing until its LISTEN has run', async () => {
      const own = new CredentialCache(handle);
      const hash = hashApiKey(users[1].apiKey);
      await own.find(hash);
      // The first lookup started the LISTEN; what it read before that is not kept.
      expect(await eventually(() => own.isLive)).toBe(true);
      const misses = own.stats.misses;
      await own.find(hash);
      expect(own.stats.misses).toBe(misses + 1);
      await own.find(hash);
      expect(own.stats.misses).toBe(misses + 1);
      await own.close();
    });
  });

  it('is told of changes on PGlite (embedded mode) too', async () => {
    const embedded = await openDatabase({ url: null, dataDir: 'memory://' });
    try {
      await migrateToLatest(embedded.db);
      const own = new CredentialCache(embedded);
      await own.find('start-listening');
      expect(await eventually(() => own.isLive)).toBe(true);
      const invalidations = own.stats.invalidations;
      await embedded.db.updateTable('accounts').set({ status: 'active' }).execute();
      expect(await eventually(() => own.stats.invalidations > invalidations)).toBe(true);
      await own.close();
    } finally {
      await embedded.close();
    }
  });
});
