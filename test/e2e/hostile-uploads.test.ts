import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import { nchatFile, textBody, waitForChatTransferJob } from '../support/factories/chat-transfer';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/**
 * Uploads a fuzz of the import routes found failing in the worker instead of being refused
 * (docs/decisions.md "Platform"): a chat file holding text Postgres cannot store (NUL, an unpaired
 * surrogate) or a number past an `integer` column passed the async import's checks and the backup's,
 * then the worker's INSERT failed: `job_failed`, retried with backoff as if the server were at fault,
 * then `dead_letter`. The `nchat` parser now refuses them: the async import's job ends in
 * `dead_letter` with `import_parse_error` on its first attempt, and a backup restore carrying such a
 * chat is 400 `import_parse_error` at once; nothing is written either way. A SillyTavern chat's
 * unstorable text is repaired (U+FFFD) and imports.
 */
describe('hostile uploads (worker)', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  const post = (path: string, body: Json, key = alice.apiKey) =>
    t.http.post(path).set('x-api-key', key).send(body);
  const sessionRows = async (accountId: string) =>
    Number(
      (
        await t.resources.database.db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  const nchat = JSON.stringify(nchatFile([{ input: { content: 'hello' }, output: { content: 'hi' } }]));

  it('an async chat import the database cannot store ends in dead_letter import_parse_error, first attempt, nothing written', async () => {
    const before = await sessionRows(alice.accountId);
    for (const data of [
      nchat.replace('"hello"', '"he\\u0000llo"'),
      nchat.replace('"metadata":{}', '"metadata":{"\\u0000":1}'),
      nchat.replace('"metadata":{}', '"metadata":{"a":"\\ud800"}'),
      nchat.replace('"token_in":0', '"token_in":10000000000'),
      nchat.replace('"version":1', '"version":2147483648'),
    ]) {
      const res = await post('/import/chat/jobs', { data });
      expect(res.status).toBe(202);
      const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
      expect(job).toMatchObject({ status: 'dead_letter', result_session_id: null, result: null });
      expect(job.error?.code).toBe('import_parse_error');
      expect((job as unknown as Json).attempt_count).toBe(1);
    }
    expect(await sessionRows(alice.accountId)).toBe(before);

    // A SillyTavern chat is repaired instead (U+FFFD), and the job succeeds at once.
    for (const data of [
      '{"user_name":"u","chat_metadata":{}}\n{"name":"U","is_user":true,"mes":"a\\u0000b"}',
      '{"user_name":"u","chat_metadata":{"x":"\\u0000"}}\n{"name":"U","is_user":true,"mes":"ab"}',
      '{"user_name":"u"}\n{"name":"B","is_user":false,"mes":"ab","extra":{"x":"\\udc00"}}',
    ]) {
      const res = await post('/import/chat/jobs', { data });
      expect(res.status).toBe(202);
      const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
      expect(job).toMatchObject({ status: 'succeeded', result_session_id: expect.any(String) });
      expect((job as unknown as Json).attempt_count).toBe(1);
    }
    expect(await sessionRows(alice.accountId)).toBe(before + 3);
  });

  it('a backup whose session chat holds a number past its integer column is 400 import_parse_error, nothing written', async () => {
    expect((await post('/import/chat', { data: nchat })).status).toBe(201);
    const exported = await post('/backup/jobs/export', {});
    expect(exported.status).toBe(202);
    const deadline = Date.now() + 20_000;
    let job: Json;
    do {
      job = (await t.http.get(`/backup/jobs/${exported.body.data.job_id}`).set('x-api-key', alice.apiKey))
        .body.data;
      if (job.status !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 50));
    } while (job.status !== 'succeeded' && Date.now() < deadline);
    expect(job.status).toBe('succeeded');
    const file = await t.http
      .get(`/backup/jobs/${job.job_id}/file`)
      .set('x-api-key', alice.apiKey)
      .buffer(true)
      .parse(textBody);
    const doc = JSON.parse(file.body as unknown as string) as Json;
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const before = await sessionRows(bob.accountId);
    const floor = '$.data.sessions[0].chat.data.floors[0]';
    for (const [mutate, path] of [
      [(f: Json) => (f.token_in = 2 ** 31), `${floor}.token_in`],
      [(f: Json) => (f.token_out = 1e10), `${floor}.token_out`],
      [(f: Json) => (f.pages[0].page_no = 2 ** 31), `${floor}.pages[0].page_no`],
      [(f: Json) => (f.pages[0].version = 2 ** 31), `${floor}.pages[0].version`],
      [(f: Json) => (f.pages[0].messages[0].seq = 2 ** 31), `${floor}.pages[0].messages[0].seq`],
      [
        (f: Json) => (f.pages[0].messages[0].token_count = 2 ** 31),
        `${floor}.pages[0].messages[0].token_count`,
      ],
    ] as const) {
      const document = JSON.parse(JSON.stringify(doc)) as Json;
      mutate(document.data.sessions[0].chat.data.floors[0]);
      const res = await post('/backup/jobs/restore', { document }, bob.apiKey);
      expect([res.status, res.body.error?.code, res.body.error?.details?.path]).toEqual([
        400,
        'import_parse_error',
        path,
      ]);
    }
    expect(await sessionRows(bob.accountId)).toBe(before);
    const jobs = await t.resources.database.db
      .selectFrom('backup_jobs')
      .select('id')
      .where('account_id', '=', bob.accountId)
      .execute();
    expect(jobs).toEqual([]);
  });
});
