import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import {
  MACRO_MAGE,
  readChatFixture,
  waitForChatTransferJob,
  textBody,
} from '../support/factories/chat-transfer';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/** Chat import and export on the embedded adapters (PGlite, in-process queue), sync and async. */
describe('chat import and export in embedded mode', () => {
  let t: TestApp;
  let worker: WorkerHandle;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
  });

  it('imports and exports a real ST chat, then does both again through jobs', async () => {
    const original = readChatFixture(MACRO_MAGE);
    const imported = await t.http.post('/import/chat').set('x-api-key', ADMIN_KEY).send({ data: original });
    expect(imported.status).toBe(201);
    const exported = await t.http
      .get(`/export/chat/${imported.body.data.session_id}?format=ext_jsonl`)
      .set('x-api-key', ADMIN_KEY)
      .buffer(true)
      .parse(textBody);
    expect(exported.status).toBe(200);
    const lines = (text: string) => text.split('\n').map((line) => JSON.parse(line));
    expect(lines(exported.body as string)).toEqual(lines(original));

    const nchat = await t.http
      .get(`/export/chat/${imported.body.data.session_id}`)
      .set('x-api-key', ADMIN_KEY)
      .buffer(true)
      .parse(textBody);
    const queued = await t.http
      .post('/import/chat/jobs')
      .set('x-api-key', ADMIN_KEY)
      .send({ data: nchat.body });
    expect(queued.status).toBe(202);
    expect(queued.body.data.format).toBe('nchat');
    const job = await waitForChatTransferJob(t, ADMIN_KEY, queued.body.data.job_id);
    expect(job).toMatchObject({
      status: 'succeeded',
      result: { format: 'nchat', floor_count: 2, message_count: 7 },
    });

    const exportJob = await t.http
      .post(`/export/chat/${job.result_session_id}/jobs`)
      .set('x-api-key', ADMIN_KEY)
      .send({ format: 'ext_jsonl' });
    const done = await waitForChatTransferJob(t, ADMIN_KEY, exportJob.body.data.job_id);
    expect(done.status).toBe('succeeded');
    const file = await t.http
      .get(`/chat-transfer-jobs/${done.job_id}/file`)
      .set('x-api-key', ADMIN_KEY)
      .buffer(true)
      .parse(textBody);
    expect(file.status).toBe(200);
    expect(lines(file.body as string)).toEqual(lines(original));
  });
});
