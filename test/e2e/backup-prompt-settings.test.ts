import { backupRepository } from '@hearth/persistence';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import { nchatFile, textBody } from '../support/factories/chat-transfer';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(90_000);

type Json = Record<string, any>;

/**
 * A session's prompt settings in account backups (docs/decisions.md "Backup"): the export carries the
 * row as written (`prompt_settings`, no account or session id, the account's own id as writer left
 * out), a restore checks it with the settings route's rules before anything is stored (400
 * `import_parse_error` naming the path) and gives the restored session the same row; a session without
 * settings, and a document from before the field, restore without one.
 */
describe('Backup: session prompt settings', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let withSettings: string;
  let without: string;

  const db = () => t.resources.database.db;
  const url = (id: string) => `/sessions/${id}/prompt-runtime/mode`;
  const post = (path: string, body: Json, key = alice.apiKey) =>
    t.http.post(path).set('x-api-key', key).send(body);
  const put = (id: string, body: Json) => t.http.put(url(id)).set('x-api-key', alice.apiKey).send(body);
  const mode = async (id: string, key: string): Promise<Json> => {
    const res = await t.http.get(url(id)).set('x-api-key', key);
    expect(res.status).toBe(200);
    return res.body.data;
  };

  const NOTE = 'Keep {{char}} terse. ' + 'n'.repeat(100);
  const EVERY_SETTING = {
    prompt_mode: 'native',
    macro_engine: 'classic',
    post_processing: 'strict_tools',
    timezone: 'Europe/Berlin',
    persona_position: 'at_depth',
    persona_depth: 10_000,
    persona_role: 'assistant',
    lorebook: { scanDepth: 7, recursive: false, characterStrategy: 'evenly', budgetPercent: 40 },
    authors_note: { prompt: NOTE, interval: 3, depth: 6, position: 'before_prompt', role: 'user' },
  };

  async function waitForJob(id: string, key: string): Promise<Json> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await t.http.get(`/backup/jobs/${id}`).set('x-api-key', key);
      if (res.status !== 200) throw new Error(`GET /backup/jobs/${id} answered ${res.status}`);
      const job = res.body.data as Json;
      if (job.status === 'succeeded' || job.status === 'dead_letter') return job;
      if (Date.now() > deadline) throw new Error(`backup job ${id} still ${job.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function exportDoc(): Promise<{ job: Json; doc: Json }> {
    const res = await post('/backup/jobs/export', {});
    expect(res.status).toBe(202);
    const job = await waitForJob(res.body.data.job_id, alice.apiKey);
    expect(job.status).toBe('succeeded');
    const file = await t.http
      .get(`/backup/jobs/${job.job_id}/file`)
      .set('x-api-key', alice.apiKey)
      .buffer(true)
      .parse(textBody);
    expect(file.status).toBe(200);
    return { job, doc: JSON.parse(file.body as unknown as string) };
  }

  async function restore(doc: Json, caller: Caller): Promise<Json> {
    const res = await post('/backup/jobs/restore', { document: doc }, caller.apiKey);
    expect(res.status).toBe(202);
    const job = await waitForJob(res.body.data.job_id, caller.apiKey);
    expect(job).toMatchObject({ status: 'succeeded', error: null });
    return job;
  }

  const sessionOf = (doc: Json, id: string): Json =>
    doc.data.sessions.find((s: Json) => s._original_id === id);
  const settingsRows = (accountId: string) => backupRepository.listSessionPromptSettings(db(), accountId);

  beforeAll(async () => {
    t = await startTestApp();
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
    const file = JSON.stringify(nchatFile([{ input: { content: 'hello' }, output: { content: 'hi' } }]));
    const a = await post('/import/chat', { data: file });
    const b = await post('/import/chat', { data: file });
    expect([a.status, b.status]).toEqual([201, 201]);
    withSettings = a.body.data.session_id;
    without = b.body.data.session_id;
    // Two writes: version 2, and a key set then reset (not carried).
    expect(
      (
        await put(withSettings, {
          ...EVERY_SETTING,
          lorebook: { ...EVERY_SETTING.lorebook, includeNames: false },
        })
      ).status,
    ).toBe(200);
    expect((await put(withSettings, { lorebook: { includeNames: null } })).status).toBe(200);
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  it('round trip: every setting set comes back on the restored session, with its version and time', async () => {
    const original = await mode(withSettings, alice.apiKey);
    expect(original.version).toBe(2);
    const { job, doc } = await exportDoc();
    expect(job.result.counts).toMatchObject({ sessions: 2, session_prompt_settings: 1 });
    expect(sessionOf(doc, withSettings).prompt_settings).toEqual({
      prompt_mode: 'native',
      macro_engine: 'classic',
      post_processing: 'strict_tools',
      timezone: 'Europe/Berlin',
      persona_position: 'at_depth',
      persona_depth: 10_000,
      persona_role: 'assistant',
      lorebook_settings: EVERY_SETTING.lorebook,
      authors_note: EVERY_SETTING.authors_note,
      version: 2,
      updated_at: original.updated_at,
      // Written by the account itself: its id is not carried.
      updated_by: null,
    });
    expect(original.updated_by).toBe(alice.accountId);
    expect(JSON.stringify(doc)).not.toContain(alice.accountId);
    expect(sessionOf(doc, without).prompt_settings).toBeNull();

    const bob = await createAccountCaller(t, { name: 'Bob' });
    const restored = await restore(doc, bob);
    expect(restored.result.counts).toMatchObject({ sessions: 2, session_prompt_settings: 1 });
    const copy = await mode(restored.result.id_map.sessions[withSettings], bob.apiKey);
    expect(copy.settings).toEqual(original.settings);
    expect(copy.effective).toEqual(original.effective);
    expect(copy.sources).toEqual(original.sources);
    expect(copy).toMatchObject({ version: 2, updated_at: original.updated_at, updated_by: null });

    // The session without settings has no row, and shows the defaults at version 0.
    const bare = restored.result.id_map.sessions[without];
    expect((await settingsRows(bob.accountId)).map((r) => r.session_id)).toEqual([
      restored.result.id_map.sessions[withSettings],
    ]);
    expect(await mode(bare, bob.apiKey)).toMatchObject({ version: 0, updated_by: null });
  });

  it('writer ids: a Client of the restoring account is kept, any other id is null; version defaults to 1', async () => {
    const { doc } = await exportDoc();
    const carol = await createAccountCaller(t, { name: 'Carol' });
    const carolsClient = await createClientCaller(t, carol.accountId, 'Editor');
    const alicesClient = await createClientCaller(t, alice.accountId, 'Other');
    const settings = sessionOf(doc, withSettings).prompt_settings;
    settings.updated_by = carolsClient.clientId;
    delete settings.version;
    // Keys besides the row's are ignored, like any record's.
    settings.account_id = alice.accountId;
    settings.future_setting = 1;
    const copy = JSON.parse(JSON.stringify(doc));
    copy.data.sessions.find((s: Json) => s._original_id === withSettings).prompt_settings.updated_by =
      alicesClient.clientId;

    const job = await restore(doc, carol);
    const view = await mode(job.result.id_map.sessions[withSettings], carol.apiKey);
    expect(view).toMatchObject({ version: 1, updated_by: carolsClient.clientId });
    const dave = await createAccountCaller(t, { name: 'Dave' });
    const other = await restore(copy, dave);
    const daveView = await mode(other.result.id_map.sessions[withSettings], dave.apiKey);
    expect(daveView).toMatchObject({ version: 1, updated_by: null });
    expect(daveView.settings).toEqual((await mode(withSettings, alice.apiKey)).settings);
  });

  it('a document from before the field restores as before: no settings row', async () => {
    const { doc } = await exportDoc();
    for (const session of doc.data.sessions) delete session.prompt_settings;
    const erin = await createAccountCaller(t, { name: 'Erin' });
    const job = await restore(doc, erin);
    expect(job.result.counts).toMatchObject({ sessions: 2, session_prompt_settings: 0 });
    expect(await settingsRows(erin.accountId)).toEqual([]);
    expect(await mode(job.result.id_map.sessions[withSettings], erin.apiKey)).toMatchObject({ version: 0 });
  });

  it('an invalid value is 400 import_parse_error naming its path, and nothing is stored; the limits are taken', async () => {
    const { doc } = await exportDoc();
    const i = doc.data.sessions.findIndex((s: Json) => s._original_id === withSettings);
    const at = `$.data.sessions[${i}].prompt_settings`;
    const broken = (mutate: (p: Json) => void): Json => {
      const copy = JSON.parse(JSON.stringify(doc));
      mutate(copy.data.sessions[i].prompt_settings);
      return copy;
    };
    const frank = await createAccountCaller(t, { name: 'Frank' });
    const cases: Array<[Json, string]> = [
      [broken((p) => (p.prompt_mode = 'bogus')), `${at}.prompt_mode`],
      [broken((p) => (p.post_processing = 'claude')), `${at}.post_processing`],
      [broken((p) => (p.timezone = 'Mars/Olympus_Mons')), `${at}.timezone`],
      [broken((p) => (p.persona_position = 9)), `${at}.persona_position`],
      [broken((p) => (p.persona_depth = 10_001)), `${at}.persona_depth`],
      [broken((p) => (p.persona_role = 'narrator')), `${at}.persona_role`],
      [broken((p) => (p.lorebook_settings.scanDepth = 1001)), `${at}.lorebook_settings.scanDepth`],
      [broken((p) => (p.lorebook_settings.noSuchKey = 1)), `${at}.lorebook_settings.noSuchKey`],
      [broken((p) => (p.lorebook_settings = [])), `${at}.lorebook_settings`],
      [broken((p) => (p.authors_note.prompt = 'x'.repeat(100_001))), `${at}.authors_note.prompt`],
      [broken((p) => (p.authors_note.interval = 10_000)), `${at}.authors_note.interval`],
      [broken((p) => (p.authors_note.position = 'in_prompt')), `${at}.authors_note.position`],
      [broken((p) => (p.authors_note.extra = 'x')), `${at}.authors_note.extra`],
      [broken((p) => (p.version = 2 ** 31)), `${at}.version`],
      [broken((p) => (p.version = 0)), `${at}.version`],
      [broken((p) => delete p.updated_at), `${at}.updated_at`],
      [broken((p) => (p.updated_by = 5)), `${at}.updated_by`],
    ];
    const notAnObject = JSON.parse(JSON.stringify(doc));
    notAnObject.data.sessions[i].prompt_settings = 'all of them';
    cases.push([notAnObject, at]);
    for (const [document, path] of cases) {
      const res = await post('/backup/jobs/restore', { document }, frank.apiKey);
      expect([path, res.status, res.body.error?.code]).toEqual([path, 400, 'import_parse_error']);
      expect(res.body.error.details.path).toBe(path);
    }
    expect(await backupRepository.listSessions(db(), frank.accountId)).toEqual([]);
    expect(await settingsRows(frank.accountId)).toEqual([]);
    const jobs = await db()
      .selectFrom('backup_jobs')
      .select('id')
      .where('account_id', '=', frank.accountId)
      .execute();
    expect(jobs).toEqual([]);

    // At the limits: taken, and stored as given; a null key is "not set".
    const atLimits = broken((p) => {
      p.authors_note.prompt = 'x'.repeat(100_000);
      p.authors_note.interval = 9999;
      p.persona_depth = 10_000;
      p.version = 2 ** 31 - 1;
      p.lorebook_settings.scanDepth = 1000;
      p.lorebook_settings.recursive = null;
    });
    const job = await restore(atLimits, frank);
    const view = await mode(job.result.id_map.sessions[withSettings], frank.apiKey);
    expect(view.version).toBe(2 ** 31 - 1);
    expect(view.settings).toMatchObject({
      persona_depth: 10_000,
      authors_note: { prompt: 'x'.repeat(100_000), interval: 9999 },
    });
    expect(view.settings.lorebook).toEqual({
      scanDepth: 1000,
      characterStrategy: 'evenly',
      budgetPercent: 40,
    });
  });
});
