import { DEFAULT_AGENT_INSTRUCTIONS } from '@hearth/domain';
import { type ProjectRow } from '@hearth/persistence';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import {
  createAgentBinding,
  createAgentType,
  jobsOfBinding,
  waitForJobStatus,
} from '../support/factories/agent-runs';
import {
  createDerivedOutput,
  derivedOutputRows,
  projectEventRows,
} from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { createSessionInProject } from '../support/factories/sessions';
import { waitFor } from '../support/poll';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import type { TestApp } from '../support/test-app';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';
import { pingWorkers } from '../../apps/worker/src/ping';

jest.setTimeout(60_000);

type Json = Record<string, any>;

const writer = { allowed_output_targets: ['derived_output'] };

/** The first job of a binding, once the trigger has created it. */
const firstJobOf = (t: TestApp, bindingId: string) =>
  waitFor(async () => (await jobsOfBinding(t, bindingId))[0], `a job of binding ${bindingId}`);

/**
 * Event-triggered Agent Jobs (spec 1 "Events": a matching event creates an `agent.run` job with
 * trigger_type `event`): the database trigger creates the job and notifies `hearth_agent_jobs`; the
 * worker LISTENs and enqueues it at once (no maintenance scan runs in these suites). The run's own
 * writes (source `runtime_job`) never trigger agents.
 */
describe.each([
  ['Postgres and Redis', false],
  ['embedded (PGlite, in-process queue)', true],
])('agent event triggers: %s', (_label, embedded) => {
  let fake: FakeModelServer;
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, { embedded, env: { ENABLE_AGENT_RUNTIME_WORKER: 'true' } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
    project = await createProject(t, { accountId: alice.accountId });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await fake.close();
    if (!embedded) await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });
  beforeEach(() => fake.reset());

  it('a derived output created over HTTP runs a subscribed binding, and its own output triggers nothing', async () => {
    const type = await createAgentType(t, alice.accountId, {
      key: 'echo',
      defaults: {
        grants: writer,
        event_subscriptions: [
          { type: 'derived_output.created', filter_json: { payload: { domain: 'notes' } } },
        ],
      },
    });
    const binding = await createAgentBinding(t, type, project, { metadata: { output_domain: 'notes' } });
    fake.script({ reply: '{"seen": true}' });

    // Another domain does not match the filter.
    await createDerivedOutput(t, project.id, alice.apiKey, { domain: 'other' });
    const note = await createDerivedOutput(t, project.id, alice.apiKey, { domain: 'notes' });
    const job = await firstJobOf(t, binding.id);
    const event = (await projectEventRows(t, project.id)).find(
      (e) => e.type === 'derived_output.created' && (e.payload as Json).derived_output_id === note.id,
    )!;
    expect(job).toMatchObject({
      trigger_type: 'event',
      source_event_id: event.id,
      dry_run: false,
      delivery_targets: ['derived_output'],
      dedupe_key: `agent.run:${binding.id}:event:${event.id}`,
      payload: { input_json: {}, trigger_reason: 'event:derived_output.created' },
    });

    // Enqueued by the LISTEN dispatch: nothing else enqueues trigger-made rows here.
    const done = await waitForJobStatus(t, job.id);
    expect(done).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    const written = (done.result as Json).writes[0];
    const own = (await projectEventRows(t, project.id)).find(
      (e) => e.type === 'derived_output.created' && (e.payload as Json).derived_output_id === written.id,
    )!;
    // Its own output has the subscribed domain, but the event is the job's: no second job. The trigger
    // runs in the write's transaction, which committed before the job was marked succeeded.
    expect(own).toMatchObject({
      source: 'runtime_job',
      correlation_id: job.id,
      causation_event_id: event.id,
    });
    expect((await jobsOfBinding(t, binding.id)).map((j) => j.id)).toEqual([job.id]);

    // The trigger event is in the prompt's context with its summary payload.
    const request = fake.requests.find((r) => r.messages[0]?.content === DEFAULT_AGENT_INSTRUCTIONS)!;
    const doc = JSON.parse(request.messages.at(-1)!.content) as Json;
    expect(doc.trigger).toMatchObject({
      type: 'event',
      reason: 'event:derived_output.created',
      event: {
        id: event.id,
        type: 'derived_output.created',
        payload: { derived_output_id: note.id, domain: 'notes' },
      },
    });
  });

  it('a committed turn runs a session-scoped binding on that session and floor', async () => {
    const type = await createAgentType(t, alice.accountId, {
      scopeKind: 'session',
      defaults: {
        grants: { ...writer, reads: ['transcript'] },
        event_subscriptions: [{ type: 'floor.committed', filter_json: null }],
      },
    });
    const binding = await createAgentBinding(t, type, project);
    const session = await createSessionInProject(t, project.id, { apiKey: alice.apiKey });
    const respond = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', alice.apiKey)
      .send({ message: 'the lantern flickers' });
    expect(respond.status).toBe(200);
    const floorId = respond.body.data.floor_id as string;

    const job = await firstJobOf(t, binding.id);
    expect(job.payload).toEqual({
      input_json: {},
      trigger_reason: 'event:floor.committed',
      session_id: session.id,
      floor_id: floorId,
    });
    const done = await waitForJobStatus(t, job.id);
    expect(done.status).toBe('succeeded');
    const output = (await derivedOutputRows(t, project.id)).find(
      (o) => o.id === (done.result as Json).writes[0].id,
    );
    expect(output).toMatchObject({ source_session_id: session.id, source_floor_id: floorId });
    const request = fake.requests.find((r) => r.messages[0]?.content === DEFAULT_AGENT_INSTRUCTIONS)!;
    expect(request.messages.at(-1)!.content).toContain('the lantern flickers');
  });
});

describe('agent event triggers with ENABLE_AGENT_RUNTIME_WORKER=false', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let worker: WorkerHandle;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, { env: { ENABLE_AGENT_RUNTIME_WORKER: 'false' } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await fake.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  it('creates the job but no worker runs it: it stays pending', async () => {
    expect(worker.queues).toEqual(['system', 'chat']);
    const alice = await createAccountCaller(t, { name: 'Alice' });
    const project = await createProject(t, { accountId: alice.accountId });
    const type = await createAgentType(t, alice.accountId, {
      defaults: {
        grants: writer,
        event_subscriptions: [{ type: 'derived_output.created', filter_json: null }],
      },
    });
    const binding = await createAgentBinding(t, type, project);
    await createDerivedOutput(t, project.id, alice.apiKey);
    const job = await firstJobOf(t, binding.id);

    // The worker runs: a ping made after the agent job is answered, the agent job is not.
    const ping = await pingWorkers(t.resources, 15_000);
    expect(ping.status).toBe('succeeded');
    expect(await waitForJobStatus(t, job.id, ['pending'])).toMatchObject({
      status: 'pending',
      attempt_count: 0,
      started_at: null,
      phase: null,
    });
    expect(fake.requests).toEqual([]);
  });
});
