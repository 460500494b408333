import { agentsRepository, inTransaction, jobsRepository, type ProjectRow } from '@hearth/persistence';
import { createDerivedOutput } from '../support/factories/derived-outputs';
import { createSessionRow } from '../support/factories/events';
import { createFloorRow } from '../support/factories/floors';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  agentState,
  createAgentType,
  createBinding,
  defaultWorkspace,
  logsOf,
  outcome,
  runBinding,
  type Json,
} from './agents-support';

/**
 * Spec 1 "Agent jobs" and the run route: a manual run creates a `pending` `agent.run` job (no worker
 * consumes the `agent` queue here: ENABLE_AGENT_RUNTIME_WORKER is off), deduplicated by
 * Idempotency-Key; the list (newest first, status filter, limit 1-100, offset, total), the detail
 * and cancel (`pending` / `retry_waiting` only). A Project event matching a binding's subscription
 * creates a job with trigger `event` (the database trigger of migration 20261127100000).
 */
describe('Agent jobs', () => {
  let t: TestApp;
  let alice: Caller;
  let ws: string;
  let project: ProjectRow;
  let type: Json;
  let binding: Json;

  const run = (b: Json, body: Json = {}, headers: Record<string, string> = {}, p: { id: string } = project) =>
    t.http
      .post(`/projects/${p.id}/agent-bindings/${b.id}/run`)
      .set({ 'x-api-key': alice.apiKey, ...headers })
      .send(body);
  const jobs = (query: Json = {}, p: { id: string } = project) =>
    t.http.get(`/projects/${p.id}/agent-jobs`).query(query).set('x-api-key', alice.apiKey);
  const job = (id: string, p: { id: string } = project) =>
    t.http.get(`/projects/${p.id}/agent-jobs/${id}`).set('x-api-key', alice.apiKey);
  const cancel = (id: string, p: { id: string } = project) =>
    t.http.post(`/projects/${p.id}/agent-jobs/${id}/cancel`).set('x-api-key', alice.apiKey);
  const jobRow = async (id: string) => {
    const row = await jobsRepository.findById(t.resources.database.db, id);
    if (!row) throw new Error(`job ${id} not found`);
    return row;
  };

  async function refused(send: () => PromiseLike<{ status: number; body: Json }>, expected: string) {
    const before = await agentState(t);
    const res = await send();
    expect(outcome(res)).toBe(expected);
    expect(await agentState(t)).toEqual(before);
    return res;
  }

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    ws = (await defaultWorkspace(t, alice.accountId)).id;
    project = await createProject(t, { accountId: alice.accountId });
    type = await createAgentType(t, alice.apiKey, ws, {
      defaults: { grants: { allowed_output_targets: ['derived_output', 'project_inbox'] } },
    });
    binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: type.id });
  });
  afterAll(async () => {
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  describe('run', () => {
    it('202: a pending manual job, dry run by default, with the effective output targets; logged', async () => {
      const res = await run(binding);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        job_id: expect.stringMatching(/^job_/),
        created: true,
        agent_binding_id: binding.id,
        dedupe_key: null,
      });
      const detail = await job(res.body.job_id);
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual({
        id: res.body.job_id,
        workspace_id: ws,
        project_id: project.id,
        status: 'pending',
        phase: null,
        attempt_count: 0,
        max_attempts: 5,
        available_at: null,
        started_at: null,
        finished_at: null,
        last_error: null,
        last_error_code: null,
        last_error_class: null,
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
        agent_type_id: type.id,
        agent_binding_id: binding.id,
        source_event_id: null,
        trigger_type: 'manual',
        dry_run: true,
        delivery_targets: ['derived_output', 'project_inbox'],
        result: null,
      });
      const row = await jobRow(res.body.job_id);
      expect(row).toMatchObject({
        name: 'agent.run',
        queue: 'agent',
        account_id: alice.accountId,
        payload: { input_json: {}, trigger_reason: null },
      });
      const logs = await logsOf(t, alice.accountId, 'agent_binding.run', binding.id);
      expect(logs.at(-1)).toMatchObject({
        project_id: project.id,
        target_type: 'agent_binding',
        metadata: expect.objectContaining({ job_id: res.body.job_id, dry_run: true, trigger_type: 'manual' }),
      });
    });

    it('takes dry_run, trigger_reason and input_json; the narrowed targets of the binding', async () => {
      const narrow = await createBinding(t, alice.apiKey, project.id, {
        agent_type_id: type.id,
        grants: { allowed_output_targets: ['project_inbox'] },
      });
      const res = await run(narrow, {
        dry_run: false,
        trigger_reason: 'by hand',
        input_json: { topic: 'moon' },
      });
      expect(res.status).toBe(202);
      const detail = (await job(res.body.job_id)).body;
      expect(detail).toMatchObject({
        dry_run: false,
        delivery_targets: ['project_inbox'],
        trigger_type: 'manual',
      });
      expect((await jobRow(res.body.job_id)).payload).toEqual({
        input_json: { topic: 'moon' },
        trigger_reason: 'by hand',
      });
    });

    it('without Idempotency-Key every run creates a job; with one, a repeat answers the first job', async () => {
      const a = await runBinding(t, alice.apiKey, project.id, binding.id);
      const b = await runBinding(t, alice.apiKey, project.id, binding.id);
      expect(a.job_id).not.toBe(b.job_id);
      const first = await run(binding, {}, { 'Idempotency-Key': 'order-1' });
      expect(first.body).toMatchObject({
        created: true,
        dedupe_key: `agent.run:${binding.id}:manual:order-1`,
      });
      const before = await agentState(t);
      const repeat = await run(binding, { dry_run: false }, { 'Idempotency-Key': 'order-1' });
      expect([repeat.status, repeat.body]).toEqual([
        202,
        {
          job_id: first.body.job_id,
          created: false,
          agent_binding_id: binding.id,
          dedupe_key: first.body.dedupe_key,
        },
      ]);
      expect(await agentState(t)).toEqual(before);
      const other = await run(binding, {}, { 'Idempotency-Key': 'order-2' });
      expect(other.body.created).toBe(true);
      expect(other.body.job_id).not.toBe(first.body.job_id);
    });

    it('Idempotency-Key limits: 200 characters accepted, 201 and empty refused', async () => {
      const ok = await run(binding, {}, { 'Idempotency-Key': 'k'.repeat(200) });
      expect([ok.status, ok.body.created]).toEqual([202, true]);
      await refused(() => run(binding, {}, { 'Idempotency-Key': 'k'.repeat(201) }), '400 validation_error');
      await refused(() => run(binding, {}, { 'Idempotency-Key': '' }), '400 validation_error');
    });

    it('trigger_reason limits: 500 characters accepted, 501 refused; null accepted', async () => {
      const ok = await run(binding, { trigger_reason: 'r'.repeat(500) });
      expect(ok.status).toBe(202);
      expect((await jobRow(ok.body.job_id)).payload).toMatchObject({ trigger_reason: 'r'.repeat(500) });
      await refused(() => run(binding, { trigger_reason: 'r'.repeat(501) }), '400 validation_error');
      expect((await run(binding, { trigger_reason: null })).status).toBe(202);
    });

    it.each([
      ['input_json not an object', { input_json: [1] }],
      ['input_json null', { input_json: null }],
      ['dry_run not a boolean', { dry_run: 'yes' }],
      ['trigger_reason not a string', { trigger_reason: 5 }],
      ['an unknown field', { priority: 1 }],
      ['input_json over 64 KiB', { input_json: { a: 'x'.repeat(64 * 1024) } }],
      ['a non-string session_id', { input_json: { session_id: 5 } }],
      // jsonb refuses an unpaired surrogate (it was a 500): in a value, in a key, in trigger_reason.
      ['an unpaired surrogate in input_json', { input_json: { note: 'half \ud83d' } }],
      ['an unpaired surrogate in an input_json key', { input_json: { ['\ude00']: 1 } }],
      ['an unpaired surrogate in trigger_reason', { trigger_reason: 'why \ud83d' }],
    ])('%s: 400 validation_error, nothing written', async (_name, body) => {
      await refused(() => run(binding, body), '400 validation_error');
    });

    it('a disabled binding: 409 binding_disabled', async () => {
      const b = await createBinding(t, alice.apiKey, project.id, { agent_type_id: type.id });
      await t.http
        .post(`/projects/${project.id}/agent-bindings/${b.id}/disable`)
        .set('x-api-key', alice.apiKey);
      const res = await refused(() => run(b), '409 binding_disabled');
      expect(res.body.error.details).toEqual({ status: 'disabled', status_reason: null });
    });

    it('a disabled type under an enabled binding: 409 agent_type_disabled', async () => {
      // The disable route refuses while a binding is enabled; the state is forced to check the run's own guard.
      const other = await createAgentType(t, alice.apiKey, ws);
      const b = await createBinding(t, alice.apiKey, project.id, { agent_type_id: other.id });
      await inTransaction(t.resources.database.db, ({ tx }) =>
        agentsRepository.updateType(tx, other.id, { status: 'disabled' }),
      );
      await refused(() => run(b), '409 agent_type_disabled');
    });

    it('a session-scoped binding runs on a session of the Project: 400 without for a writing run, 404 session_not_found for another', async () => {
      const b = await createBinding(t, alice.apiKey, project.id, {
        agent_type_id: type.id,
        scope_kind: 'session',
      });
      const session = await createSessionRow(t, project);
      const elsewhere = await createSessionRow(t, await createProject(t, { accountId: alice.accountId }));
      await refused(() => run(b, { dry_run: false }), '400 validation_error');
      // Spec 1: the run body is optional; a dry run (the default) plans without a session.
      const planned = await run(b);
      expect(planned.status).toBe(202);
      expect((await jobRow(planned.body.job_id)).payload).toEqual({ input_json: {}, trigger_reason: null });
      await refused(() => run(b, { input_json: { session_id: elsewhere.id } }), '404 session_not_found');
      await refused(() => run(b, { input_json: { session_id: 'ses_missing' } }), '404 session_not_found');
      const ok = await run(b, { input_json: { session_id: session.id } });
      expect(ok.status).toBe(202);
      expect((await jobRow(ok.body.job_id)).payload).toEqual({
        input_json: { session_id: session.id },
        trigger_reason: null,
        session_id: session.id,
      });
    });

    it('a floor-scoped binding runs on a floor of the Project: 400 without for a writing run, 404 floor_not_found for another or a temporary conversation’s', async () => {
      const b = await createBinding(t, alice.apiKey, project.id, {
        agent_type_id: type.id,
        scope_kind: 'floor',
      });
      const session = await createSessionRow(t, project);
      const floor = await createFloorRow(t, session);
      const otherSession = await createSessionRow(t, project);
      const foreignFloor = await createFloorRow(
        t,
        await createSessionRow(t, await createProject(t, { accountId: alice.accountId })),
      );
      await refused(
        () => run(b, { dry_run: false, input_json: { session_id: session.id } }),
        '400 validation_error',
      );
      const planned = await run(b, { input_json: { session_id: session.id } });
      expect(planned.status).toBe(202);
      expect((await jobRow(planned.body.job_id)).payload).toEqual({
        input_json: { session_id: session.id },
        trigger_reason: null,
        session_id: session.id,
      });
      await refused(() => run(b, { input_json: { floor_id: foreignFloor.id } }), '404 floor_not_found');
      await refused(
        () => run(b, { input_json: { floor_id: floor.id, session_id: otherSession.id } }),
        '404 floor_not_found',
      );
      // A temporary conversation of the Project is hidden from the session routes, its floors too.
      const temporary = await t.http
        .post(`/projects/${project.id}/temporary-conversations`)
        .set('x-api-key', alice.apiKey)
        .send({});
      expect(temporary.status).toBe(201);
      const message = await t.http
        .post(`/temporary-conversations/${temporary.body.data.id}/messages`)
        .set('x-api-key', alice.apiKey)
        .send({ role: 'user', content: 'hidden' });
      expect(message.status).toBe(200);
      await refused(
        () => run(b, { input_json: { floor_id: message.body.data.floor_id } }),
        '404 floor_not_found',
      );
      await refused(
        () =>
          run(b, {
            input_json: { session_id: temporary.body.data.id, floor_id: message.body.data.floor_id },
          }),
        '404 session_not_found',
      );
      const ok = await run(b, { input_json: { floor_id: floor.id } });
      expect(ok.status).toBe(202);
      expect((await jobRow(ok.body.job_id)).payload).toEqual({
        input_json: { floor_id: floor.id },
        trigger_reason: null,
        session_id: session.id,
        floor_id: floor.id,
      });
    });
  });

  describe('list and detail', () => {
    let p: ProjectRow;
    let ids: string[];

    beforeAll(async () => {
      p = await createProject(t, { accountId: alice.accountId });
      const b = await createBinding(t, alice.apiKey, p.id, { agent_type_id: type.id });
      ids = [];
      for (let i = 0; i < 3; i++) ids.push((await runBinding(t, alice.apiKey, p.id, b.id)).job_id);
      await cancel(ids[0]!, p);
    });

    it('newest first with the total; limit and offset page through', async () => {
      const all = await jobs({}, p);
      expect(all.status).toBe(200);
      expect(all.body.total).toBe(3);
      expect(all.body.items.map((j: Json) => j.id)).toEqual([...ids].reverse());
      const page = await jobs({ limit: 1, offset: 1 }, p);
      expect([page.body.total, page.body.items.map((j: Json) => j.id)]).toEqual([3, [ids[1]]]);
      const past = await jobs({ offset: 5 }, p);
      expect(past.body).toEqual({ items: [], total: 3 });
    });

    it('filters by status', async () => {
      const cancelled = await jobs({ status: 'cancelled' }, p);
      expect([cancelled.body.total, cancelled.body.items.map((j: Json) => j.id)]).toEqual([1, [ids[0]]]);
      const pending = await jobs({ status: 'pending' }, p);
      expect(pending.body.total).toBe(2);
      expect((await jobs({ status: 'dead_letter' }, p)).body).toEqual({ items: [], total: 0 });
    });

    it('limit 100 accepted, 101 and 0 refused; a bad status or offset refused', async () => {
      expect((await jobs({ limit: 100 }, p)).body.total).toBe(3);
      for (const query of [{ limit: 101 }, { limit: 0 }, { limit: 'x' }, { status: 'done' }, { offset: -1 }])
        expect(outcome(await jobs(query, p))).toBe('400 validation_error');
    });

    it('a job missing or of another Project: 404 project_agent_job_not_found', async () => {
      for (const id of ['job_missing', ids[1]!]) {
        expect(outcome(await job(id))).toBe('404 project_agent_job_not_found');
        await refused(() => cancel(id), '404 project_agent_job_not_found');
      }
    });
  });

  describe('cancel', () => {
    const lease = { leaseMs: 60_000 };

    it('pending → cancelled: 200 with the job; logged; a second cancel is 409', async () => {
      const { job_id } = await runBinding(t, alice.apiKey, project.id, binding.id);
      const res = await cancel(job_id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: job_id, status: 'cancelled', finished_at: expect.any(Number) });
      expect((await job(job_id)).body.status).toBe('cancelled');
      const logs = await logsOf(t, alice.accountId, 'agent_job.cancel', job_id);
      expect(logs).toHaveLength(1);
      expect([logs[0]?.before_ref, logs[0]?.after_ref]).toEqual([
        { status: 'pending' },
        { status: 'cancelled' },
      ]);
      const again = await refused(() => cancel(job_id), '409 project_agent_job_invalid_state');
      expect(again.body.error.details).toEqual({ status: 'cancelled' });
    });

    it('retry_waiting → cancelled', async () => {
      const { job_id } = await runBinding(t, alice.apiKey, project.id, binding.id);
      const db = t.resources.database.db;
      const now = Date.now();
      const claimed = await jobsRepository.claim(db, { id: job_id, name: 'agent.run', now, ...lease });
      await jobsRepository.markRetryWaiting(db, {
        id: job_id,
        attempt: claimed!.attempt_count,
        availableAt: now + 60_000,
        error: { last_error: 'flaky', last_error_code: 'x', last_error_class: 'retryable' },
        now,
      });
      expect((await job(job_id)).body.status).toBe('retry_waiting');
      const res = await cancel(job_id);
      expect([res.status, res.body.status, res.body.last_error]).toEqual([200, 'cancelled', 'flaky']);
    });

    it.each(['running', 'succeeded', 'dead_letter'])(
      '%s: 409 project_agent_job_invalid_state',
      async (state) => {
        const { job_id } = await runBinding(t, alice.apiKey, project.id, binding.id);
        const db = t.resources.database.db;
        const now = Date.now();
        const claimed = await jobsRepository.claim(db, { id: job_id, name: 'agent.run', now, ...lease });
        const attempt = claimed!.attempt_count;
        if (state === 'succeeded')
          await jobsRepository.markSucceeded(db, { id: job_id, attempt, result: { ok: 1 }, now });
        if (state === 'dead_letter')
          await jobsRepository.markDeadLetter(db, {
            id: job_id,
            attempt,
            error: { last_error: 'bad config', last_error_code: 'x', last_error_class: 'fatal' },
            now,
          });
        expect((await job(job_id)).body.status).toBe(state);
        const res = await refused(() => cancel(job_id), '409 project_agent_job_invalid_state');
        expect(res.body.error.details).toEqual({ status: state });
        if (state === 'succeeded') expect((await job(job_id)).body.result).toEqual({ ok: 1 });
      },
    );
  });

  describe('the event trigger', () => {
    it('a matching derived_output.created event creates a pending event job, listed with its source event', async () => {
      const p = await createProject(t, { accountId: alice.accountId });
      const subscribed = await createAgentType(t, alice.apiKey, ws, {
        defaults: {
          event_subscriptions: [{ type: 'derived_output.created' }],
          grants: { allowed_output_targets: ['derived_output'] },
        },
      });
      const all = await createBinding(t, alice.apiKey, p.id, { agent_type_id: subscribed.id });
      const filtered = await createBinding(t, alice.apiKey, p.id, {
        agent_type_id: subscribed.id,
        event_subscriptions: [
          { type: 'derived_output.created', filter_json: { payload: { domain: 'mood' } } },
        ],
      });
      const disabled = await createBinding(t, alice.apiKey, p.id, { agent_type_id: subscribed.id });
      await t.http
        .post(`/projects/${p.id}/agent-bindings/${disabled.id}/disable`)
        .set('x-api-key', alice.apiKey);

      const output = await createDerivedOutput(t, p.id, alice.apiKey, { domain: 'summary' });
      const events = await t.http.get(`/projects/${p.id}/events`).set('x-api-key', alice.apiKey);
      const event = events.body.items.find((e: Json) => e.type === 'derived_output.created');
      expect(event.payload.derived_output_id).toBe(output.id);

      const list = await jobs({}, p);
      expect(list.body.total).toBe(1);
      expect(list.body.items[0]).toMatchObject({
        status: 'pending',
        trigger_type: 'event',
        source_event_id: event.id,
        agent_binding_id: all.id,
        agent_type_id: subscribed.id,
        dry_run: false,
        delivery_targets: ['derived_output'],
      });
      expect((await jobRow(list.body.items[0].id)).payload).toEqual({
        input_json: {},
        trigger_reason: 'event:derived_output.created',
      });

      // The filtered binding takes only outputs of its domain.
      await createDerivedOutput(t, p.id, alice.apiKey, { domain: 'mood' });
      const after = await jobs({}, p);
      expect(after.body.total).toBe(3);
      expect(after.body.items.map((j: Json) => j.agent_binding_id).sort()).toEqual(
        [all.id, all.id, filtered.id].sort(),
      );
    });

    it('a non-matching filter_json or event type creates no job', async () => {
      const p = await createProject(t, { accountId: alice.accountId });
      const subscribed = await createAgentType(t, alice.apiKey, ws, {
        defaults: {
          event_subscriptions: [
            { type: 'derived_output.created', filter_json: { payload: { domain: 'never' } } },
            { type: 'floor.committed' },
          ],
        },
      });
      await createBinding(t, alice.apiKey, p.id, { agent_type_id: subscribed.id });
      await createDerivedOutput(t, p.id, alice.apiKey, { domain: 'summary' });
      expect((await jobs({}, p)).body).toEqual({ items: [], total: 0 });
    });
  });
});
