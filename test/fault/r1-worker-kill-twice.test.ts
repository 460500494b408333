import type { ProjectRow } from '@hearth/persistence';
import { ensureBuiltApi } from '../support/built-api';
import { agentWorkerEnv, startBuiltWorker, type BuiltWorker } from '../support/built-worker';
import {
  createAgentBinding,
  createAgentType,
  jobRow,
  waitForJobStatus,
} from '../support/factories/agent-runs';
import { derivedOutputRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { waitFor } from '../support/poll';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(150_000);

/** Short ledger lease and queue lock, as in r1-worker-kill.test.ts (JOB_LEASE_MS, JOB_LOCK_DURATION_MS). */
const LEASE_MS = 12_000;
const LOCK_MS = 1_000;

/**
 * R1 (performance-and-reliability.md part D), twice on one job: the worker running an `agent.run`
 * job (dry_run=false) is SIGKILLed, the job is taken over by a second worker, and that worker is
 * SIGKILLed too, while a third worker is already running. No worker starts after the second kill,
 * so no reconciler pass runs: only the queue's stall redelivery can bring the job back. BullMQ counts
 * stalls per entry and by default fails an entry on its second stall ("job stalled more than allowable
 * limit"), which dropped it and left the row `running` for good (maintenance off). The queue keeps
 * redelivering (MAX_STALLED_COUNT) and the ledger decides: the job succeeds at attempt 3 with one
 * derived output and one event.
 */
describe('R1: a job whose worker is SIGKILLed twice', () => {
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

  /** Waits for the model request of attempt `n`, then checks the row is running that attempt. */
  const attemptRunning = async (jobId: string, n: number) => {
    await waitFor(() => fake.requests.length === n, `the model request of attempt ${n}`, 45_000);
    const row = await jobRow(t, jobId);
    expect(row).toMatchObject({ status: 'running', phase: 'model', attempt_count: n });
    return row;
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

  it('a third worker already running takes it over by stall redelivery: succeeded at attempt 3, one output', async () => {
    const db = t.resources.database.db;
    const type = await createAgentType(t, alice.accountId, {
      key: 'r1-twice',
      defaults: { grants: { allowed_output_targets: ['derived_output'] } },
    });
    const binding = await createAgentBinding(t, type, project);

    // The first two model calls never answer (each killed worker's socket closes them); the third does.
    fake.script({ hang: true }, { hang: true }, { reply: '{"summary": "after two crashes"}' });
    const first = await startWorkerProcess();
    const res = await t.http
      .post(`/projects/${project.id}/agent-bindings/${binding.id}/run`)
      .set('x-api-key', alice.apiKey)
      .send({ dry_run: false });
    expect(res.status).toBe(202);
    const jobId = res.body.job_id as string;

    // Attempt 1 on the only worker; it dies.
    await attemptRunning(jobId, 1);
    await first.kill();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // Attempt 2 on the second worker (the only one alive), once the first lease has run out.
    const second = await startWorkerProcess();
    await attemptRunning(jobId, 2);
    // The third worker starts while attempt 2 runs (its start-up reconciler finds a live lease and
    // does nothing); then the second worker dies. From here on no worker starts.
    const third = await startWorkerProcess();
    expect(await jobRow(t, jobId)).toMatchObject({ status: 'running', attempt_count: 2 });
    await second.kill();
    expect(await second.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const killedAt = Date.now();
    const orphaned = await jobRow(t, jobId);
    expect(orphaned).toMatchObject({ status: 'running', attempt_count: 2 });
    expect(orphaned.lease_expires_at).toBeGreaterThan(Date.now());
    const linesBeforeKill = third.lines.length;

    const done = await waitForJobStatus(t, jobId, undefined, 60_000);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempt_count: 3,
      phase: 'deliver',
      result: expect.objectContaining({ dry_run: false, output: { summary: 'after two crashes' } }),
    });
    expect(fake.requests).toHaveLength(3);
    const afterKill = third.lines.slice(linesBeforeKill);
    expect(afterKill.filter((l) => l.includes('stalled more than allowable limit'))).toEqual([]);
    // The third worker's stall check delivered the entry again while the second lease was live (when
    // it noticed the dead lock well before the lease ended): that delivery came back when it ended.
    if (killedAt + 4 * LOCK_MS < orphaned.lease_expires_at!)
      expect(afterKill.some((l) => l.includes('"msg":"delivery of a job whose lease is live'))).toBe(true);

    const outputs = (await derivedOutputRows(t, project.id)).filter((o) => o.domain === `agent.${type.key}`);
    expect(outputs).toHaveLength(1);
    expect(outputs[0].value).toEqual({ summary: 'after two crashes' });
    expect((done.result as { writes: unknown[] }).writes).toEqual([
      { target: 'derived_output', id: outputs[0].id },
    ]);
    const fromRun = await db
      .selectFrom('project_events')
      .select(['type', 'source'])
      .where('project_id', '=', project.id)
      .where('correlation_id', '=', jobId)
      .execute();
    expect(fromRun).toEqual([{ type: 'derived_output.created', source: 'runtime_job' }]);
  });
});
