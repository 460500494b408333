import type { ProjectRow } from '@hearth/persistence';
import { ensureBuiltApi } from '../support/built-api';
import { agentWorkerEnv, startBuiltWorker, type BuiltWorker } from '../support/built-worker';
import {
  createAgentBinding,
  createAgentType,
  jobRow,
  waitForJobStatus,
} from '../support/factories/agent-runs';
import { createDerivedOutput, derivedOutputRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { waitFor } from '../support/poll';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(90_000);

/**
 * The ledger lease and the queue's lock, short for this test (JOB_LEASE_MS, JOB_LOCK_DURATION_MS).
 * The lease is much longer than the lock, so BullMQ's stall check delivers the dead worker's entry
 * again while its lease is still live: that delivery must come back once the lease has run out, not
 * be dropped (which left the job `running` until the next worker start or maintenance scan).
 */
const LEASE_MS = 12_000;
const LOCK_MS = 1_000;

/**
 * R1 (performance-and-reliability.md part D): a worker SIGKILLed while an `agent.run` job
 * (dry_run=false, writing a derived output) is `running`. Another worker takes the job over once
 * the queue's lock and the ledger's lease have run out; the job succeeds at attempt 2 with exactly
 * one derived output, one `derived_output.created` event and no gap in the Project's sequence.
 */
describe('R1: worker SIGKILL during a writing agent run', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let alice: Caller;
  let project: ProjectRow;
  const workers: BuiltWorker[] = [];

  const startWorkerProcess = async () => {
    const worker = await startBuiltWorker(
      agentWorkerEnv({
        databaseUrl: t.database!.url,
        redisUrl: REDIS_URL,
        queuePrefix: t.config.queuePrefix,
        modelBaseUrl: fake.openaiBaseUrl,
        leaseMs: LEASE_MS,
        lockMs: LOCK_MS,
      }),
    );
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    ensureBuiltApi();
    fake = await startFakeModelServer();
    // The API only: it creates and enqueues the job, the child workers consume the agent queue.
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    project = await createProject(t, { accountId: alice.accountId });
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await t?.close();
    await fake?.close();
    if (t) await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  it('recovers the job by stall detection: succeeded at attempt 2, one output, one event, no sequence gap', async () => {
    const db = t.resources.database.db;
    // An event before the run, so the sequence check covers the run's event following others.
    await createDerivedOutput(t, project.id, alice.apiKey);
    const type = await createAgentType(t, alice.accountId, {
      key: 'r1-writer',
      defaults: { grants: { allowed_output_targets: ['derived_output'] } },
    });
    const binding = await createAgentBinding(t, type, project);

    // The first model call never answers (the killed worker's socket closes it); the next one does.
    fake.script({ hang: true }, { reply: '{"summary": "after the crash"}' });
    const first = await startWorkerProcess();
    const res = await t.http
      .post(`/projects/${project.id}/agent-bindings/${binding.id}/run`)
      .set('x-api-key', alice.apiKey)
      .send({ dry_run: false });
    expect(res.status).toBe(202);
    const jobId = res.body.job_id as string;

    await waitFor(() => fake.requests.length === 1, 'the first model request', 30_000);
    expect(await jobRow(t, jobId)).toMatchObject({ status: 'running', phase: 'model', attempt_count: 1 });

    await first.kill();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // Nothing finished the attempt: the row is still `running` under the dead worker's lease.
    const orphaned = await jobRow(t, jobId);
    expect(orphaned).toMatchObject({ status: 'running', attempt_count: 1 });
    expect(orphaned.lease_expires_at).toBeGreaterThan(Date.now());

    const second = await startWorkerProcess();
    const secondUpAt = Date.now();
    const done = await waitForJobStatus(t, jobId, undefined, 45_000);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempt_count: 2,
      phase: 'deliver',
      result: expect.objectContaining({ dry_run: false, output: { summary: 'after the crash' } }),
    });
    expect(fake.requests).toHaveLength(2);
    // Up well before the lease ran out (the usual case), the new worker's stall check delivered the
    // entry while the lease was still live (the dead lock is gone within LOCK_MS, found within two
    // checks): that delivery came back when the lease ended instead of being dropped.
    if (secondUpAt + 4 * LOCK_MS < orphaned.lease_expires_at!)
      expect(second.lines.some((l) => l.includes('"msg":"delivery of a job whose lease is live'))).toBe(true);

    const outputs = (await derivedOutputRows(t, project.id)).filter((o) => o.domain === `agent.${type.key}`);
    expect(outputs).toHaveLength(1);
    expect(outputs[0].value).toEqual({ summary: 'after the crash' });
    expect((done.result as { writes: unknown[] }).writes).toEqual([
      { target: 'derived_output', id: outputs[0].id },
    ]);

    const events = await db
      .selectFrom('project_events')
      .select(['sequence', 'type', 'source', 'correlation_id', 'payload'])
      .where('project_id', '=', project.id)
      .orderBy('sequence')
      .execute();
    const fromRun = events.filter((e) => e.correlation_id === jobId);
    expect(fromRun).toEqual([
      expect.objectContaining({ type: 'derived_output.created', source: 'runtime_job' }),
    ]);
    expect(events.filter((e) => e.type === 'derived_output.created')).toHaveLength(2);
    expect(events.map((e) => Number(e.sequence))).toEqual(events.map((_, i) => i + 1));
  });
});
