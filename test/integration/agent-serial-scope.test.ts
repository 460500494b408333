import { AgentRunDispatcher, RunAgentJobUseCase, RunLedgerJobUseCase } from '@hearth/app';
import {
  agentsRepository,
  inTransaction,
  jobsRepository,
  type JobRow,
  type ProjectRow,
} from '@hearth/persistence';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import {
  createAgentBinding,
  createAgentType,
  createManualRun,
  jobRow,
  jobsOfBinding,
  waitForJobStatus,
} from '../support/factories/agent-runs';
import { createDerivedOutput } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { waitFor } from '../support/poll';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

const isRow = (claimed: JobRow | { busy: true } | undefined): claimed is JobRow =>
  claimed !== undefined && !('busy' in claimed);

/**
 * The serial scope of Agent Jobs (spec 1: `<workspace_id>:<project_id>:<agent_type_id>`, one job at a
 * time): the claim (agentsRepository.claimInSerialScope in a transaction holding the scope's lock),
 * the ledger's busy answer (redelivered, no attempt counted), and the worker running two scopes at once
 * but never two jobs of one scope. Also the LISTEN dispatcher's catch-up when it (re)starts listening.
 */
describe('agent serial scope', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTestApp({
      env: {
        ENABLE_AGENT_RUNTIME_WORKER: 'true',
        LLM_PROVIDER: 'openai',
        LLM_MODEL: 'fake-model',
        LLM_BASE_URL: fake.openaiBaseUrl,
        LLM_API_KEY: 'sk-fake-agents-0123456789abcdef',
        ALLOW_PRIVATE_BASE_URL: 'true',
      },
    });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    // The dispatcher's catch-up (run each time its LISTEN is established) enqueues every pending
    // `agent.run` row; on a loaded machine the start-up pass can come after a test has written the rows
    // it claims by hand (`enqueue: false`), and the worker would claim them first. Jobs are enqueued
    // explicitly here; the last test starts the dispatcher again to test it.
    await worker.app.get(AgentRunDispatcher).close();
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

  const claimInScope = (id: string) =>
    inTransaction(t.resources.database.db, ({ tx }) =>
      agentsRepository.claimInSerialScope(tx, { id, now: Date.now(), leaseMs: 60_000 }),
    );

  it('claims one job of a scope at a time; another scope is not held up', async () => {
    const type = await createAgentType(t, alice.accountId);
    const other = await createAgentType(t, alice.accountId);
    const [a, b] = [await createAgentBinding(t, type, project), await createAgentBinding(t, other, project)];
    const [a1, a2] = [
      await createManualRun(t, a, { enqueue: false }),
      await createManualRun(t, a, { enqueue: false }),
    ];
    const b1 = await createManualRun(t, b, { enqueue: false });

    // Two claims of one scope at once: the scope's lock orders them, the second sees the first running.
    const claims = await Promise.all([claimInScope(a1.id), claimInScope(a2.id)]);
    expect(claims.filter(isRow)).toHaveLength(1);
    expect(claims.filter((c) => c && 'busy' in c)).toEqual([{ busy: true }]);
    const [held] = claims.filter(isRow);
    const waiting = held.id === a1.id ? a2 : a1;
    expect(await jobRow(t, waiting.id)).toMatchObject({ status: 'pending', attempt_count: 0 });

    // Another type's scope in the same Project claims while the first scope is busy.
    expect(isRow(await claimInScope(b1.id))).toBe(true);

    // Once the holder finishes, the scope is free.
    await jobsRepository.markSucceeded(t.resources.database.db, {
      id: held.id,
      attempt: 1,
      result: null,
      now: Date.now(),
    });
    const next = await claimInScope(waiting.id);
    expect(isRow(next) && next.attempt_count).toBe(1);
  });

  it('a delivery of a job that cannot be claimed anyway (cancelled) is not answered busy while its scope runs', async () => {
    const type = await createAgentType(t, alice.accountId);
    const binding = await createAgentBinding(t, type, project);
    const running = await createManualRun(t, binding, { enqueue: false });
    const cancelled = await createManualRun(t, binding, { enqueue: false });
    expect(isRow(await claimInScope(running.id))).toBe(true);
    await jobsRepository.cancel(t.resources.database.db, { id: cancelled.id, now: Date.now() });
    expect(await claimInScope(cancelled.id)).toBeUndefined();
    expect(await jobRow(t, cancelled.id)).toMatchObject({ status: 'cancelled', attempt_count: 0 });
  });

  it('a busy delivery asks to come back in about a second and counts no attempt', async () => {
    const type = await createAgentType(t, alice.accountId);
    const binding = await createAgentBinding(t, type, project);
    const running = await createManualRun(t, binding, { enqueue: false });
    const queued = await createManualRun(t, binding, { enqueue: false });
    expect(isRow(await claimInScope(running.id))).toBe(true);

    const runner = worker.app.get(RunLedgerJobUseCase);
    const agentRun = worker.app.get(RunAgentJobUseCase);
    let worked = false;
    const before = Date.now();
    const outcome = await runner.execute(
      'agent.run',
      queued.id,
      async () => {
        worked = true;
      },
      undefined,
      { claim: agentRun.claim },
    );
    expect(worked).toBe(false);
    expect(outcome?.redeliverAt).toBeGreaterThanOrEqual(before + 1_000);
    expect(await jobRow(t, queued.id)).toMatchObject({
      status: 'pending',
      attempt_count: 0,
      started_at: null,
    });
  });

  it('the worker never runs two jobs of one scope at once, while another scope runs alongside', async () => {
    const type = await createAgentType(t, alice.accountId);
    const other = await createAgentType(t, alice.accountId);
    const binding = await createAgentBinding(t, type, project);
    const otherBinding = await createAgentBinding(t, other, project);
    // The first model request is slow; the others answer at once.
    fake.script({ reply: '{"n": 1}', delayMs: 1_500 }, { reply: '{"n": 2}' }, { reply: '{"n": 3}' });
    const scoped = [await createManualRun(t, binding), await createManualRun(t, binding)];
    await waitFor(async () => fake.requests.length === 1, 'the first request of the scope');
    const alongside = await createManualRun(t, otherBinding);

    const side = await waitForJobStatus(t, alongside.id);
    expect(side.status).toBe('succeeded');
    const [first, second] = (await Promise.all(scoped.map((j) => waitForJobStatus(t, j.id)))).sort(
      (x, y) => x.started_at! - y.started_at!,
    );
    expect([first.status, second.status]).toEqual(['succeeded', 'succeeded']);
    // One scope: the second started after the first finished, and waiting cost it no attempt.
    expect(second.started_at!).toBeGreaterThanOrEqual(first.finished_at!);
    expect([first.attempt_count, second.attempt_count]).toEqual([1, 1]);
    // Two scopes: the other type's job ran inside the first one's run.
    expect(side.started_at!).toBeGreaterThanOrEqual(first.started_at!);
    expect(side.finished_at!).toBeLessThanOrEqual(first.finished_at!);
  });

  it('enqueues trigger-made jobs it was not listening for once it listens again', async () => {
    const type = await createAgentType(t, alice.accountId, {
      defaults: { event_subscriptions: [{ type: 'derived_output.created', filter_json: null }] },
    });
    const binding = await createAgentBinding(t, type, project);
    const dispatcher = worker.app.get(AgentRunDispatcher);
    await dispatcher.close();

    await createDerivedOutput(t, project.id, alice.apiKey);
    const [job] = await jobsOfBinding(t, binding.id);
    expect(job).toMatchObject({ status: 'pending', trigger_type: 'event' });
    // Nobody enqueued it: the API does not, and the worker was not listening.
    expect(await t.resources.jobQueue.has('agent.run', job.id)).toBe(false);

    dispatcher.start();
    expect((await waitForJobStatus(t, job.id)).status).toBe('succeeded');
  });
});
