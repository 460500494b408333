import { StageAgentPageCandidateUseCase } from '@hearth/app';
import { jobsRepository, operationLogsRepository, type ProjectRow } from '@hearth/persistence';
import { enqueueLedgerJob } from '@hearth/platform';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import {
  createAgentBinding,
  createAgentType,
  createManualRun,
  waitForJobStatus,
} from '../support/factories/agent-runs';
import { projectEventRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { createSessionInProject } from '../support/factories/sessions';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { type TestApp } from '../support/test-app';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/**
 * Agent runs with the `page_staged_write` output target (docs/decisions.md "Page candidates"): the
 * run's output staged as a candidate for the reply page of the job's floor, read back with
 * `GET /pages/:id/staged-writes`; the page itself never changes.
 */
describe('agent page candidates', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, { env: { ENABLE_AGENT_RUNTIME_WORKER: 'true' } });
    worker = await startWorker(t.resources, {
      jobRunner: { backoff: { baseMs: 1_000, maxMs: 1_000 } },
      shutdownGraceMs: 1_000,
    });
    alice = await createAccountCaller(t, { name: 'Alice' });
    project = await createProject(t, { accountId: alice.accountId });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await fake.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });
  beforeEach(() => fake.reset());

  const get = (path: string, caller: Caller = alice) => t.http.get(path).set('x-api-key', caller.apiKey);

  /** A session of the Project with one committed turn: its floor and reply page. */
  async function committedTurn(caller: Caller = alice, projectId = project.id) {
    const session = await createSessionInProject(t, projectId, { apiKey: caller.apiKey });
    const res = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', caller.apiKey)
      .send({ message: 'The door creaks.' });
    expect(res.status).toBe(200);
    return {
      sessionId: session.id,
      floorId: res.body.data.floor_id as string,
      pageId: res.body.data.page_id as string,
    };
  }

  const candidateType = (key: string, metadata: Json = {}) =>
    createAgentType(t, alice.accountId, {
      key,
      scopeKind: 'floor',
      defaults: { grants: { allowed_output_targets: ['page_staged_write', 'derived_output'] }, metadata },
    });

  it("stages the output as a candidate for the floor's reply page, with its log and event, and leaves the page as it was", async () => {
    const turn = await committedTurn();
    const type = await candidateType('rewriter', { staged_write_reason: 'Tighter prose' });
    const binding = await createAgentBinding(t, type, project);
    const messages = [{ role: 'assistant', content: 'The door groans open.' }];
    fake.script({ reply: JSON.stringify({ messages }) });
    const job = await createManualRun(t, binding, {
      dryRun: false,
      sessionId: turn.sessionId,
      floorId: turn.floorId,
      deliveryTargets: ['page_staged_write'],
    });
    const done = await waitForJobStatus(t, job.id);
    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({
      writes: [{ target: 'page_staged_write', id: expect.stringMatching(/^psw_/) }],
      skipped_targets: [],
    });
    const candidateId = (done.result as Json).writes[0].id as string;

    const listed = await get(`/pages/${turn.pageId}/staged-writes`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toMatchObject({
      page_id: turn.pageId,
      floor_id: turn.floorId,
      session_id: turn.sessionId,
    });
    expect(listed.body.data.items).toEqual([
      {
        id: candidateId,
        target: 'page_staged_write',
        status: 'staged',
        target_page_id: turn.pageId,
        session_id: turn.sessionId,
        source_kind: 'agent_job',
        source_conversation_id: null,
        source_page_id: null,
        source_job_id: job.id,
        reason: 'Tighter prose',
        messages,
        created_by_client_id: alice.clientId,
        created_at: expect.any(Number),
      },
    ]);
    // The page is unchanged.
    const floor = await get(`/floors/${turn.floorId}`);
    const page = floor.body.data.pages.find((p: Json) => p.id === turn.pageId);
    expect(page.messages.map((m: Json) => m.content)).toEqual(['ECHO: The door creaks.']);
    expect(page.is_active).toBe(true);

    const events = (await projectEventRows(t, project.id)).filter((e) => e.correlation_id === job.id);
    expect(events.map((e) => [e.type, e.source, e.page_id, e.payload])).toEqual([
      [
        'page_staged_write.created',
        'runtime_job',
        turn.pageId,
        {
          staged_write_id: candidateId,
          target_page_id: turn.pageId,
          source_kind: 'agent_job',
          message_count: 1,
        },
      ],
    ]);
    const logs = await operationLogsRepository.list(
      t.resources.database.db,
      { accountId: alice.accountId, filters: { project_id: project.id } },
      { limit: 100, offset: 0, sortOrder: 'asc' },
    );
    expect(
      logs.filter((l) => l.target_id === candidateId).map((l) => [l.action, l.source_type, l.floor_id]),
    ).toEqual([['page_staged_write.create', 'job', turn.floorId]]);

    // Another account sees neither the page nor its candidates.
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const foreign = await get(`/pages/${turn.pageId}/staged-writes`, bob);
    expect([foreign.status, foreign.body.error?.code]).toEqual([404, 'page_not_found']);
    expect(JSON.stringify(foreign.body)).not.toContain('groans');
    const missing = await get('/pages/pg_missing/staged-writes');
    expect([missing.status, missing.body.error?.code]).toEqual([404, 'page_not_found']);
  });

  it('a plain-text reply becomes one assistant message; without a floor the target is skipped (no_target_page)', async () => {
    const turn = await committedTurn();
    const type = await candidateType('plain');
    const binding = await createAgentBinding(t, type, project);
    fake.script({ reply: 'Just prose, no JSON.' }, { reply: '{"summary": "x"}' });
    const withFloor = await createManualRun(t, binding, {
      dryRun: false,
      floorId: turn.floorId,
      sessionId: turn.sessionId,
    });
    const done = await waitForJobStatus(t, withFloor.id);
    expect(done.status).toBe('succeeded');
    const items = (await get(`/pages/${turn.pageId}/staged-writes`)).body.data.items;
    expect(items.map((i: Json) => [i.source_job_id, i.reason, i.messages])).toEqual([
      [withFloor.id, 'agent.plain', [{ role: 'assistant', content: 'Just prose, no JSON.' }]],
    ]);

    const withoutFloor = await createManualRun(t, binding, { dryRun: false });
    const skipped = await waitForJobStatus(t, withoutFloor.id);
    expect(skipped.status).toBe('succeeded');
    expect(skipped.result).toMatchObject({
      writes: [{ target: 'derived_output', id: expect.any(String) }],
      skipped_targets: [{ target: 'page_staged_write', reason: 'no_target_page' }],
    });
  });

  it("a floor outside the job's Project is never written to", async () => {
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const bobProject = await createProject(t, { accountId: bob.accountId });
    const bobTurn = await committedTurn(bob, bobProject.id);
    const type = await candidateType('outsider');
    const binding = await createAgentBinding(t, type, project);
    fake.script({ reply: '{"text": "intrusion"}' });
    // The run route refuses such a floor; a job payload naming one anyway finds no page.
    const job = await createManualRun(t, binding, {
      dryRun: false,
      floorId: bobTurn.floorId,
      deliveryTargets: ['page_staged_write'],
    });
    const done = await waitForJobStatus(t, job.id);
    expect(done.result).toMatchObject({
      writes: [],
      skipped_targets: [{ target: 'page_staged_write', reason: 'no_target_page' }],
    });
    expect((await get(`/pages/${bobTurn.pageId}/staged-writes`, bob)).body.data.items).toEqual([]);
  });

  it('a dry run plans the candidate and writes nothing', async () => {
    const turn = await committedTurn();
    const type = await candidateType('planner');
    const binding = await createAgentBinding(t, type, project);
    fake.script({ reply: '{"text": "maybe"}' });
    const job = await createManualRun(t, binding, {
      dryRun: true,
      floorId: turn.floorId,
      deliveryTargets: ['page_staged_write'],
    });
    const done = await waitForJobStatus(t, job.id);
    expect(done.result).toMatchObject({
      writes: [],
      planned_writes: [{ target: 'page_staged_write', floor_id: turn.floorId, reason: 'agent.planner' }],
      skipped_targets: [],
    });
    expect((await get(`/pages/${turn.pageId}/staged-writes`)).body.data.items).toEqual([]);
  });

  it('a retried attempt gets the candidate an earlier attempt of the job wrote', async () => {
    const turn = await committedTurn();
    const type = await candidateType('retrier');
    const binding = await createAgentBinding(t, type, project);
    const job = await createManualRun(t, binding, {
      dryRun: false,
      floorId: turn.floorId,
      deliveryTargets: ['page_staged_write'],
      enqueue: false,
    });
    const db = t.resources.database.db;
    await jobsRepository.claim(db, { id: job.id, name: 'agent.run', now: Date.now(), leaseMs: 60_000 });
    // Attempt 1 staged its candidate, then its worker died before recording success.
    const earlier = await worker.app.get(StageAgentPageCandidateUseCase, { strict: false }).execute(
      {
        kind: 'account',
        accountId: alice.accountId,
        accountRole: 'user',
        clientId: alice.clientId,
        clientIsDefault: true,
      },
      {
        projectId: project.id,
        floorId: turn.floorId,
        messages: [{ role: 'assistant', content: 'first attempt' }],
        reason: 'agent.retrier',
        jobId: job.id,
        origin: {
          source: 'runtime_job',
          correlation_id: job.id,
          causation_event_id: null,
          log_source_type: 'job',
        },
      },
    );
    expect(earlier?.id).toMatch(/^psw_/);
    await jobsRepository.markRetryWaiting(db, {
      id: job.id,
      attempt: 1,
      availableAt: Date.now(),
      error: {
        last_error: 'worker lost',
        last_error_code: 'job_lease_expired',
        last_error_class: 'uncertain',
      },
      now: Date.now(),
    });
    fake.script({ reply: '{"text": "second attempt"}' });
    await enqueueLedgerJob(t.resources.jobQueue, 'agent.run', job.id);
    const done = await waitForJobStatus(t, job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempt_count: 2,
      result: { writes: [{ target: 'page_staged_write', id: earlier!.id }] },
    });
    const items = (await get(`/pages/${turn.pageId}/staged-writes`)).body.data.items;
    expect(items.map((i: Json) => i.messages[0].content)).toEqual(['first attempt']);
  });
});
