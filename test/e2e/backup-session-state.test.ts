import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import { textBody } from '../support/factories/chat-transfer';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession } from '../support/factories/sessions';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import type { TestApp } from '../support/test-app';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(90_000);

type Json = Record<string, any>;

/**
 * Session state in account backups (docs/decisions.md "Backup" and "Client data and session state"):
 * the export carries the account's namespaces and each session's writes on its floors; a restore
 * registers the namespaces the account lacks (keeps its own by name), puts the writes on the restored
 * floors so every floor sees the same state, checks the document first (400 `import_parse_error`), and
 * keeps the account limits.
 */
describe('Backup: client data and session state', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let sessionId: string;
  let branchId: string;
  /** Alice's backup before any test restores into her account. */
  let firstExport: { job: Json; doc: Json };

  const post = (path: string, body: Json, key = alice.apiKey, app = () => t) =>
    app().http.post(path).set('x-api-key', key).send(body);
  const get = (path: string, key = alice.apiKey, app = () => t) => app().http.get(path).set('x-api-key', key);

  async function waitForJob(id: string, key: string, app = () => t): Promise<Json> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await get(`/backup/jobs/${id}`, key, app);
      if (res.status !== 200) throw new Error(`GET /backup/jobs/${id} answered ${res.status}`);
      const job = res.body.data as Json;
      if (job.status === 'succeeded' || job.status === 'dead_letter') return job;
      if (Date.now() > deadline) throw new Error(`backup job ${id} still ${job.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function exportDoc(key = alice.apiKey, app = () => t): Promise<{ job: Json; doc: Json }> {
    const res = await post('/backup/jobs/export', {}, key, app);
    expect(res.status).toBe(202);
    const job = await waitForJob(res.body.data.job_id, key, app);
    expect(job.status).toBe('succeeded');
    const file = await app()
      .http.get(`/backup/jobs/${job.job_id}/file`)
      .set('x-api-key', key)
      .buffer(true)
      .parse(textBody);
    return { job, doc: JSON.parse(file.body as unknown as string) };
  }

  async function restoreJob(doc: Json, caller: Caller, app = () => t): Promise<Json> {
    const res = await post('/backup/jobs/restore', { document: doc }, caller.apiKey, app);
    expect(res.status).toBe(202);
    return waitForJob(res.body.data.job_id, caller.apiKey, app);
  }

  /** A session's state at a branch (by name) as comparable values: no ids. */
  async function stateByBranch(id: string, key: string, branch: string | null) {
    const branches = await get(`/sessions/${id}/branches`, key);
    const target =
      branch === null ? '' : `?branch_id=${branches.body.data.find((b: Json) => b.name === branch).id}`;
    const res = await get(`/sessions/${id}/state${target}`, key);
    expect(res.status).toBe(200);
    return res.body.data.items.map((i: Json) => [i.namespace, i.slot, i.value, i.floor_no]);
  }

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, { env: { ENABLE_CLIENT_DATA: 'true' } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
    expect((await post('/client-data/namespaces', { name: 'inv', max_items: 50 })).status).toBe(201);
    expect(
      (
        await post('/client-data/namespaces', {
          name: 'quest',
          replay_policy: 'confirm',
          description: 'flags',
        })
      ).status,
    ).toBe(201);
    sessionId = (await createSession(t, { apiKey: alice.apiKey })).id;
    const respond = (writes: Json[], extra: Json = {}) =>
      post(`/sessions/${sessionId}/respond`, { message: 'go', session_state_writes: writes, ...extra });
    const f0 = await respond([
      { namespace: 'inv', slot: 'gold', value: 10 },
      { namespace: 'quest', slot: 'started', value: { at: 'inn', party: ['a', 'b'] } },
    ]);
    expect(f0.status).toBe(200);
    expect((await respond([{ namespace: 'inv', slot: 'gold', delete: true }])).status).toBe(200);
    const branch = await post(`/floors/${f0.body.data.floor_id}/branch`, { name: 'side' });
    branchId = branch.body.data.branch_id;
    expect(
      (await respond([{ namespace: 'inv', slot: 'rope', value: null }], { branch_id: branchId })).status,
    ).toBe(200);
    firstExport = await exportDoc();
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await fake.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  it('round trip into another account: namespaces registered, every branch sees the same state', async () => {
    const { job, doc } = firstExport;
    expect(job.result.counts).toMatchObject({ client_data_namespaces: 2, session_state_writes: 4 });
    expect(doc.data.client_data_namespaces.map((n: Json) => [n.name, n.replay_policy, n.max_items])).toEqual([
      ['inv', 'replay', 50],
      ['quest', 'confirm', 1000],
    ]);
    const exported = doc.data.sessions.find((s: Json) => s._original_id === sessionId);
    expect(exported.session_state_writes).toHaveLength(4);
    expect(JSON.stringify(doc)).not.toContain(alice.accountId);

    const bob = await createAccountCaller(t, { name: 'Bob' });
    const restored = await restoreJob(doc, bob);
    expect(restored).toMatchObject({ status: 'succeeded', error: null });
    expect(restored.result.counts).toMatchObject({ client_data_namespaces: 2, session_state_writes: 4 });
    const newSession = restored.result.id_map.sessions[sessionId];
    expect(await stateByBranch(newSession, bob.apiKey, null)).toEqual(
      await stateByBranch(sessionId, alice.apiKey, null),
    );
    expect(await stateByBranch(newSession, bob.apiKey, 'side')).toEqual(
      await stateByBranch(sessionId, alice.apiKey, 'side'),
    );
    expect(await stateByBranch(newSession, bob.apiKey, 'side')).toEqual([
      ['inv', 'gold', 10, 0],
      ['inv', 'rope', null, 1],
      ['quest', 'started', { at: 'inn', party: ['a', 'b'] }, 0],
    ]);
    const quest = await get('/client-data/namespaces/quest', bob.apiKey);
    expect(quest.body.data).toMatchObject({
      replay_policy: 'confirm',
      description: 'flags',
      usage: { writes: 1 },
    });
    expect((await get('/client-data/usage', bob.apiKey)).body.data).toMatchObject({ items: 3 });
    // The restored writes keep their replay rules: a retry of the restored floor 0 needs a confirmation.
    const floors = (await get(`/sessions/${newSession}/floors`, bob.apiKey)).body.data;
    const retry = await post(`/floors/${floors[0].id}/retry`, {}, bob.apiKey);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('session_state_replay_confirmation_required');
  });

  it('into the same account: a namespace it has is used as it is, with a warning', async () => {
    const { doc } = await exportDoc();
    const restored = await restoreJob(doc, alice);
    expect(restored.result.counts).toMatchObject({ client_data_namespaces: 0, session_state_writes: 4 });
    expect(restored.result.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('client data namespace inv already existed')]),
    );
    const newSession = restored.result.id_map.sessions[sessionId];
    expect(await stateByBranch(newSession, alice.apiKey, null)).toEqual(
      await stateByBranch(sessionId, alice.apiKey, null),
    );
  });

  it('refuses a document whose client data does not hold together (400 import_parse_error)', async () => {
    const { doc } = await exportDoc();
    const carol = await createAccountCaller(t, { name: 'Carol' });
    const sessionIndex = doc.data.sessions.findIndex((s: Json) => s._original_id === sessionId);
    const cases: Array<[string, (d: Json) => void]> = [
      [
        `$.data.client_data_namespaces[0].name`,
        (d) => (d.data.client_data_namespaces[0].name = 'game_state'),
      ],
      [`$.data.client_data_namespaces[1].name`, (d) => (d.data.client_data_namespaces[1].name = 'inv')],
      [
        `$.data.client_data_namespaces[0].max_items`,
        (d) => (d.data.client_data_namespaces[0].max_items = 10_001),
      ],
      [
        `$.data.sessions[${sessionIndex}].session_state_writes[0].namespace_id_ref`,
        (d) => (d.data.sessions[sessionIndex].session_state_writes[0].namespace_id_ref = 'cdns_missing'),
      ],
      [
        `$.data.sessions[${sessionIndex}].session_state_writes[0].floor_id_ref`,
        (d) => (d.data.sessions[sessionIndex].session_state_writes[0].floor_id_ref = 'flr_elsewhere'),
      ],
      [
        `$.data.sessions[${sessionIndex}].session_state_writes[1].seq`,
        (d) => (d.data.sessions[sessionIndex].session_state_writes[1].seq = 1),
      ],
      [
        `$.data.sessions[${sessionIndex}].session_state_writes[0].value`,
        (d) => delete d.data.sessions[sessionIndex].session_state_writes[0].value,
      ],
    ];
    for (const [path, spoil] of cases) {
      const copy = JSON.parse(JSON.stringify(doc));
      spoil(copy);
      const res = await post('/backup/jobs/restore', { document: copy }, carol.apiKey);
      expect([res.status, res.body.error?.code, res.body.error?.details?.path]).toEqual([
        400,
        'import_parse_error',
        path,
      ]);
    }
    expect((await get('/client-data/namespaces', carol.apiKey)).body.data).toEqual([]);
    // A document from before the fields restores without client data.
    const old = JSON.parse(JSON.stringify(doc));
    delete old.data.client_data_namespaces;
    for (const s of old.data.sessions) delete s.session_state_writes;
    const restored = await restoreJob(old, carol);
    expect(restored.result.counts).toMatchObject({ client_data_namespaces: 0, session_state_writes: 0 });
  });

  it('keeps the account limits: a restore past them fails and writes nothing', async () => {
    const { doc } = firstExport;
    const limited = await startTurnsApp(fake, {
      env: { ENABLE_CLIENT_DATA: 'true', CLIENT_DATA_ACCOUNT_MAX_ITEMS: '3' },
    });
    const limitedWorker = await startWorker(limited.resources, { shutdownGraceMs: 1_000 });
    try {
      const app = () => limited;
      const dave = await createAccountCaller(limited, { name: 'Dave' });
      // The document holds 3 values (and one delete, which stores none): exactly at the limit.
      const atLimit = await restoreJob(doc, dave, app);
      expect(atLimit).toMatchObject({ status: 'succeeded', error: null });
      const past = await restoreJob(doc, dave, app);
      expect(past.status).toBe('dead_letter');
      expect(past.error).toMatchObject({ code: 'session_state_account_item_limit_exceeded' });
      expect((await get('/sessions?limit=200', dave.apiKey, app)).body.data).toHaveLength(1);
    } finally {
      await limitedWorker.close();
      await limited.close();
      await deleteQueueKeys(REDIS_URL, limited.config.queuePrefix);
    }
  });
});
