import type { ProjectRow } from '@hearth/persistence';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  createAgentType,
  createBinding,
  defaultWorkspace,
  logsOf,
  type Json,
  type Res,
} from './agents-support';

const PARALLEL = 50;

/**
 * R14 (performance-and-reliability.md part D): duplicate run requests. 50 parallel
 * `POST .../agent-bindings/:id/run` with one Idempotency-Key create exactly one job (one
 * `created: true`, 49 `created: false` naming the same job and dedupe key), also once the queue's
 * Redis keys are wiped: the dedupe key lives in Postgres (a unique column), not in the queue.
 * Without a key, every request is a job of its own. No worker consumes the agent queue here.
 */
describe('R14: parallel run requests of one binding', () => {
  let t: TestApp;
  let alice: Caller;
  let project: ProjectRow;
  let binding: Json;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    project = await createProject(t, { accountId: alice.accountId });
    const ws = (await defaultWorkspace(t, alice.accountId)).id;
    const type = await createAgentType(t, alice.apiKey, ws, {
      defaults: { grants: { allowed_output_targets: ['derived_output'] } },
    });
    binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: type.id });
  });
  afterAll(async () => {
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  const runAll = (headers: Record<string, string>): Promise<Res[]> =>
    Promise.all(
      Array.from({ length: PARALLEL }, () =>
        t.http
          .post(`/projects/${project.id}/agent-bindings/${binding.id}/run`)
          .set({ 'x-api-key': alice.apiKey, ...headers })
          .send({ dry_run: false, input_json: { same: 'input' } })
          .then((res) => ({ status: res.status, body: res.body as Json })),
      ),
    );
  const jobRows = () =>
    t.resources.database.db
      .selectFrom('jobs')
      .select(['id', 'status', 'dedupe_key', 'dry_run'])
      .where('agent_binding_id', '=', binding.id)
      .execute();
  const queueHolds = (id: string) => t.resources.jobQueue.has('agent.run', id);

  it('one Idempotency-Key: exactly one job, before and after the queue keys are wiped', async () => {
    const key = 'r14-same-key';
    const dedupeKey = `agent.run:${binding.id}:manual:${key}`;
    const first = await runAll({ 'Idempotency-Key': key });
    expect(first.map((r) => r.status)).toEqual(Array(PARALLEL).fill(202));
    const created = first.filter((r) => r.body.created === true);
    expect(created).toHaveLength(1);
    const jobId = created[0].body.job_id as string;
    expect(first.filter((r) => r.body.created === false)).toHaveLength(PARALLEL - 1);
    for (const res of first)
      expect(res.body).toEqual({
        job_id: jobId,
        created: res.body.created,
        agent_binding_id: binding.id,
        dedupe_key: dedupeKey,
      });
    expect(await jobRows()).toEqual([
      { id: jobId, status: 'pending', dedupe_key: dedupeKey, dry_run: false },
    ]);
    expect(await logsOf(t, alice.accountId, 'agent_binding.run', binding.id)).toHaveLength(1);
    expect(await queueHolds(jobId)).toBe(true);

    // Redis loses the queue (this machine's Redis keeps nothing on disk): the entry is gone.
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
    expect(await queueHolds(jobId)).toBe(false);

    const again = await runAll({ 'Idempotency-Key': key });
    expect(again.map((r) => r.status)).toEqual(Array(PARALLEL).fill(202));
    for (const res of again)
      expect(res.body).toEqual({
        job_id: jobId,
        created: false,
        agent_binding_id: binding.id,
        dedupe_key: dedupeKey,
      });
    expect(await jobRows()).toEqual([
      { id: jobId, status: 'pending', dedupe_key: dedupeKey, dry_run: false },
    ]);
    expect(await logsOf(t, alice.accountId, 'agent_binding.run', binding.id)).toHaveLength(1);
    // The repeats answered from the row and enqueued nothing (the reconciler puts the row back).
    expect(await queueHolds(jobId)).toBe(false);
  });

  it('no Idempotency-Key: every request is a job of its own', async () => {
    const before = await jobRows();
    const results = await runAll({});
    expect(results.map((r) => r.status)).toEqual(Array(PARALLEL).fill(202));
    expect(results.every((r) => r.body.created === true && r.body.dedupe_key === null)).toBe(true);
    const ids = results.map((r) => r.body.job_id as string);
    expect(new Set(ids).size).toBe(PARALLEL);

    const rows = (await jobRows()).filter((row) => !before.some((b) => b.id === row.id));
    expect(rows.map((row) => row.id).sort()).toEqual([...ids].sort());
    expect(rows.every((row) => row.status === 'pending' && row.dedupe_key === null)).toBe(true);
    expect(await logsOf(t, alice.accountId, 'agent_binding.run', binding.id)).toHaveLength(
      before.length + PARALLEL,
    );
    expect((await Promise.all(ids.map(queueHolds))).every(Boolean)).toBe(true);
  });
});
