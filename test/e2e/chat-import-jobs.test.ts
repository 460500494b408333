import { PurgeExpiredFilesUseCase } from '@hearth/app';
import { chatTransferRepository, jobsRepository, operationLogsRepository } from '@hearth/persistence';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import { characterCard, importCharacter } from '../support/factories/characters';
import {
  extJsonlChat,
  MACRO_MAGE,
  nchatFile,
  readChatFixture,
  waitForChatTransferJob,
  textBody,
} from '../support/factories/chat-transfer';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/**
 * Asynchronous chat transfer (spec 3 "Async import", "Async export flow"): `POST /import/chat/jobs` and
 * `POST /export/chat/:id/jobs` answer 202 with a pending job; the worker (`chat.transfer`) parses and
 * publishes, or writes the export file; `GET /chat-transfer-jobs/:id` and `/file`; failures end in
 * `dead_letter` with the error; other accounts and other Clients get 404.
 */
describe('Chat transfer jobs', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_EXPORT_SYNC_MAX_MESSAGES: '3' } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
    bob = await createAccountCaller(t, { name: 'Bob' });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  const requestImport = (body: Json, key = alice.apiKey) =>
    t.http.post('/import/chat/jobs').set('x-api-key', key).send(body);
  const requestExport = (sessionId: string, body: Json = {}, key = alice.apiKey) =>
    t.http.post(`/export/chat/${sessionId}/jobs`).set('x-api-key', key).send(body);
  const getJob = (id: string, key = alice.apiKey) =>
    t.http.get(`/chat-transfer-jobs/${id}`).set('x-api-key', key);
  const getFile = (id: string, key = alice.apiKey) =>
    t.http.get(`/chat-transfer-jobs/${id}/file`).set('x-api-key', key).buffer(true).parse(textBody);
  const importNow = async (data: string) => {
    const res = await t.http.post('/import/chat').set('x-api-key', alice.apiKey).send({ data });
    expect(res.status).toBe(201);
    return res.body.data.session_id as string;
  };

  it('imports an ext_jsonl file in the worker: 202 pending, then succeeded with the result', async () => {
    const res = await requestImport({ data: readChatFixture(MACRO_MAGE), title: 'Queued' });
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({
      job_id: expect.stringMatching(/^job_/),
      status: 'pending',
      job_kind: 'import_chat',
      format: null,
    });
    // The queue entry carries the job id only; the raw text waits in chat_transfer_jobs.
    const ledger = await jobsRepository.findById(t.resources.database.db, res.body.data.job_id);
    expect(ledger).toMatchObject({ name: 'chat.transfer', account_id: alice.accountId });
    expect(JSON.stringify(ledger?.payload)).not.toContain('Macro');

    const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
    expect(job).toMatchObject({
      job_id: res.body.data.job_id,
      status: 'succeeded',
      job_kind: 'import_chat',
      format: null,
      requested_session_id: null,
      output_expires_at: null,
      result_session_id: expect.stringMatching(/^ses_/),
      error: null,
    });
    expect(job.result).toEqual({
      session_id: job.result_session_id,
      title: 'Queued',
      floor_count: 2,
      message_count: 7,
      swipe_count: 4,
      skipped_lines: 0,
      import_source: 'ext_jsonl',
      format: 'ext_jsonl',
    });
    const floors = await t.http
      .get(`/sessions/${job.result_session_id}/floors`)
      .set('x-api-key', alice.apiKey);
    expect(floors.body.data).toHaveLength(2);
    // The raw text is dropped once imported; the import was logged by the job.
    const row = await chatTransferRepository.findJobRow(t.resources.database.db, job.job_id);
    expect(row?.input_text).toBeNull();
    const logs = await operationLogsRepository.list(
      t.resources.database.db,
      { accountId: alice.accountId, filters: { action: 'import_chat', session_id: job.result_session_id! } },
      { limit: 5, offset: 0, sortOrder: 'asc' },
    );
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ source_type: 'job', metadata: expect.objectContaining({ async: true }) });
  });

  it('detects nchat at enqueue and binds the character resolved at enqueue', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ name: 'Async' }),
    });
    const file = nchatFile([{ input: { content: 'a' }, output: { content: 'b' } }]);
    const res = await requestImport({ data: JSON.stringify(file), character_id: character.id });
    expect(res.status).toBe(202);
    expect(res.body.data.format).toBe('nchat');
    const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
    expect(job.status).toBe('succeeded');
    expect(job.result).toMatchObject({ format: 'nchat', floor_count: 1, page_count: 2, variable_count: 0 });
    const session = await t.http.get(`/sessions/${job.result_session_id}`).set('x-api-key', alice.apiKey);
    expect(session.body.data).toMatchObject({
      character_id: character.id,
      character_version_id: character.versionId,
    });
  });

  it('a file that does not parse ends in dead_letter with the error on the job', async () => {
    for (const [data, code, format] of [
      ['{not a chat', 'import_parse_error', null],
      [
        JSON.stringify(nchatFile([{ input: { content: 'a' }, output: { content: 'b' } }], {}, '9.1.0')),
        'import_unsupported_version',
        'nchat',
      ],
      [JSON.stringify({ user_name: 'u' }), 'import_empty', null],
    ] as const) {
      const res = await requestImport({ data });
      expect(res.status).toBe(202);
      expect(res.body.data.format).toBe(format);
      const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
      expect(job).toMatchObject({ status: 'dead_letter', result_session_id: null, result: null });
      expect(job.error?.code).toBe(code);
    }
  });

  it('checks the body and the binding at enqueue: 400 validation_error, character_not_found; 403 for a non-default Client', async () => {
    for (const body of [{}, { data: 1 }, { data: 'x', title: '' }]) {
      const res = await requestImport(body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'validation_error',
      });
    }
    const bobs = await importCharacter(t, { apiKey: bob.apiKey });
    const missing = await requestImport({ data: extJsonlChat(1), character_id: bobs.id });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('character_not_found');
    const client = await createClientCaller(t, alice.accountId);
    const denied = await requestImport({ data: extJsonlChat(1) }, client.apiKey);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('project_access_denied');
  });

  it('exports in the worker (above the sync limit): file, headers, expiry, result', async () => {
    const sessionId = await importNow(readChatFixture(MACRO_MAGE));
    const sync = await t.http.get(`/export/chat/${sessionId}`).set('x-api-key', alice.apiKey);
    expect(sync.status).toBe(409);
    expect(sync.body.error.code).toBe('export_requires_async');

    const before = Date.now();
    const res = await requestExport(sessionId, { format: 'ext_jsonl' });
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({
      job_id: expect.stringMatching(/^job_/),
      status: 'pending',
      job_kind: 'export_chat',
      format: 'ext_jsonl',
      requested_session_id: sessionId,
    });
    const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
    expect(job).toMatchObject({
      status: 'succeeded',
      job_kind: 'export_chat',
      requested_session_id: sessionId,
    });
    expect(job.output_expires_at).toBeGreaterThanOrEqual(before + t.config.chatExportArtifactTtlMs);
    expect(job.result).toMatchObject({
      session_id: sessionId,
      filename: 'Macro Mage.jsonl',
      message_count: 7,
    });

    const file = await getFile(job.job_id);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(file.headers['content-disposition']).toBe('attachment; filename="Macro Mage.jsonl"');
    const original = readChatFixture(MACRO_MAGE)
      .split('\n')
      .map((line) => JSON.parse(line));
    expect((file.body as string).split('\n').map((line) => JSON.parse(line))).toEqual(original);
  });

  it('exports nchat by default, with variables and memories options', async () => {
    const sessionId = await importNow(
      JSON.stringify(
        nchatFile([{ input: { content: 'x' }, output: { content: 'y' } }], {
          variables: [{ scope: 'chat', scope_id_ref: null, key: 'k', value: 1, updated_at: 1 }],
        }),
      ),
    );
    const full = await waitForChatTransferJob(
      t,
      alice.apiKey,
      (await requestExport(sessionId)).body.data.job_id,
    );
    expect(full.format).toBe('nchat');
    const file = await getFile(full.job_id);
    expect(file.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(file.headers['content-disposition']).toBe('attachment; filename="Hand-made chat.nchat"');
    expect(JSON.parse(file.body as string).data.variables).toHaveLength(1);
    const bare = await waitForChatTransferJob(
      t,
      alice.apiKey,
      (await requestExport(sessionId, { include_variables: false })).body.data.job_id,
    );
    expect(JSON.parse((await getFile(bare.job_id)).body as string).data).not.toHaveProperty('variables');
  });

  it('POST /export/chat/:id/jobs: 404 session_not_found, 400 validation_error', async () => {
    const sessionId = await importNow(extJsonlChat(1));
    for (const [id, key] of [
      ['ses_missing', alice.apiKey],
      [sessionId, bob.apiKey],
    ]) {
      const res = await requestExport(id, {}, key);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('session_not_found');
    }
    for (const body of [{ format: 'zip' }, { include_variables: 'yes' }, { other: 1 }]) {
      const res = await requestExport(sessionId, body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'validation_error',
      });
    }
  });

  it('a job and its file are 404 for other accounts and other Clients; an import job has no file', async () => {
    const sessionId = await importNow(extJsonlChat(1));
    const exported = await waitForChatTransferJob(
      t,
      alice.apiKey,
      (await requestExport(sessionId)).body.data.job_id,
    );
    const client = await createClientCaller(t, alice.accountId, 'Other client');
    for (const key of [bob.apiKey, client.apiKey]) {
      const job = await getJob(exported.job_id, key);
      expect(job.status).toBe(404);
      expect(job.body.error.code).toBe('chat_transfer_job_not_found');
      const file = await getFile(exported.job_id, key);
      expect(file.status).toBe(404);
      expect(JSON.parse(file.body as string).error.code).toBe('chat_transfer_job_not_found');
    }
    expect((await getJob('job_missing')).status).toBe(404);

    const imported = await waitForChatTransferJob(
      t,
      alice.apiKey,
      (await requestImport({ data: extJsonlChat(1) })).body.data.job_id,
    );
    const none = await getFile(imported.job_id);
    expect(none.status).toBe(404);
    expect(JSON.parse(none.body as string).error.code).toBe('artifact_not_found');
  });

  it('an export whose session is gone ends in dead_letter (session_not_found)', async () => {
    const sessionId = await importNow(extJsonlChat(1));
    // Stop consuming so the job waits, delete the session, then let a worker take it.
    await worker.close();
    const res = await requestExport(sessionId);
    expect(res.status).toBe(202);
    // Not succeeded yet: no file.
    const pending = await getFile(res.body.data.job_id);
    expect(pending.status).toBe(404);
    expect(JSON.parse(pending.body as string).error.code).toBe('artifact_not_found');
    expect((await getJob(res.body.data.job_id)).body.data.status).toBe('pending');
    const deleted = await t.http.delete(`/sessions/${sessionId}`).set('x-api-key', alice.apiKey);
    expect(deleted.status).toBe(200);
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
    expect(job.status).toBe('dead_letter');
    expect(job.error?.code).toBe('session_not_found');
    expect((await getFile(job.job_id)).status).toBe(404);
  });
});

describe('Chat export artifact lifetime (CHAT_EXPORT_ARTIFACT_TTL_MS)', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_EXPORT_ARTIFACT_TTL_MS: '1' } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  it('410 artifact_expired once output_expires_at has passed', async () => {
    const imported = await t.http
      .post('/import/chat')
      .set('x-api-key', alice.apiKey)
      .send({ data: extJsonlChat(1) });
    const res = await t.http
      .post(`/export/chat/${imported.body.data.session_id}/jobs`)
      .set('x-api-key', alice.apiKey)
      .send({});
    const job = await waitForChatTransferJob(t, alice.apiKey, res.body.data.job_id);
    expect(job.status).toBe('succeeded');
    while (Date.now() <= job.output_expires_at!) await new Promise((resolve) => setTimeout(resolve, 2));
    const file = await t.http.get(`/chat-transfer-jobs/${job.job_id}/file`).set('x-api-key', alice.apiKey);
    expect(file.status).toBe(410);
    expect(file.body.error).toMatchObject({
      code: 'artifact_expired',
      details: { output_expires_at: job.output_expires_at },
    });

    // The maintenance purge deletes the expired file (not one still valid at its `now`); the download
    // keeps answering 410 from the job.
    const files = () =>
      t.resources.database.db
        .selectFrom('chat_transfer_artifacts')
        .select('job_id')
        .where('job_id', '=', job.job_id)
        .execute();
    const purge = worker.app.get(PurgeExpiredFilesUseCase);
    expect(await purge.execute(job.output_expires_at! - 1)).toMatchObject({ chat_files: 0 });
    expect(await files()).toHaveLength(1);
    expect(await purge.execute()).toMatchObject({ chat_files: 1 });
    expect(await files()).toHaveLength(0);
    const after = await t.http.get(`/chat-transfer-jobs/${job.job_id}/file`).set('x-api-key', alice.apiKey);
    expect(after.status).toBe(410);
    expect(after.body.error).toMatchObject({
      code: 'artifact_expired',
      details: { output_expires_at: job.output_expires_at },
    });
  });
});
