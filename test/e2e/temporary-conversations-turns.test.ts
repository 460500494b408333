import {
  AppendTemporaryMessageUseCase,
  CleanupTemporaryConversationsUseCase,
  ExpireTemporaryConversationsUseCase,
  RunMaintenanceScanUseCase,
} from '@hearth/app';
import { DB } from '@hearth/platform';
import { accountActor } from '../support/factories/accounts';
import { addMember, createAccountCaller, defaultCaller, type Caller } from '../support/factories/members';
import { findProject } from '../support/factories/projects';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  appendMessage,
  conversationRow,
  createInternalTemporary,
  createTemporary,
  expireNow,
  operationLogsOf,
} from './temporary-conversations-support';
import { SseCall, startFakeModelServer, startTurnsApp, until, type FakeModelServer } from './turns-support';

jest.setTimeout(60_000);

/**
 * Spec 2 temporary conversations: respond, retry and retry-step (JSON and SSE), export, inspect, and
 * the maintenance steps (TTL expiry, body cleanup).
 */
describe('temporary conversations: turns, export, inspect, maintenance', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let observer: Caller;
  let source: Awaited<ReturnType<typeof createSession>>;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
    observer = await createAccountCaller(t, { name: 'Observer' });
    source = await createSession(t, { body: { title: 'Source' } });
    await addMember(t, (await findProject(t, source.projectId))!, observer, 'observer');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const post = (path: string, body: Record<string, unknown> = {}, key = ADMIN_KEY) =>
    t.http.post(path).set('x-api-key', key).send(body);
  const get = (path: string, key = ADMIN_KEY) => t.http.get(path).set('x-api-key', key);
  const respond = (id: string, body: Record<string, unknown>) =>
    post(`/temporary-conversations/${id}/respond`, body);
  const transcript = async (id: string) => (await get(`/temporary-conversations/${id}/transcript`)).body.data;
  const adminActor = async () => accountActor(await defaultCaller(t, ADMIN_KEY), 'admin');
  const newConversation = (body: Record<string, unknown> = {}) =>
    createTemporary(t, { sessionId: source.id }, body);

  describe('respond', () => {
    it('with input_message: appends it and answers the temporary result (JSON)', async () => {
      const c = await newConversation();
      fake.script({ reply: 'A draft answer.', usage: { prompt_tokens: 10, completion_tokens: 4 } });
      const res = await respond(c.id, { input_message: { role: 'user', content: 'Draft this' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        conversation_id: c.id,
        branch_id: 'main',
        floor_no: 0,
        generated_text: 'A draft answer.',
        total_usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
        final_state: 'committed',
      });
      expect(fake.requests[0].messages.at(-1)).toEqual({ role: 'user', content: 'Draft this' });
      const floors = (await transcript(c.id)).floors;
      expect(floors).toHaveLength(1);
      expect(floors[0]).toMatchObject({ id: res.body.data.floor_id, state: 'committed', branch_id: 'main' });
      const output = floors[0].pages.find((p: { page_kind: string }) => p.page_kind === 'output');
      expect(output.id).toBe(res.body.data.page_id);
      expect(output.messages[0]).toMatchObject({ role: 'assistant', content: 'A draft answer.' });

      // The turn's operation log is the normal one, on the conversation's session.
      const actions = (await operationLogsOf(t, c.id)).map((l) => l.action);
      expect(actions).toContain('respond');
      // Its floor.committed event is internal: observers of the Project never see it.
      const events = await get(`/projects/${source.projectId}/events?limit=500`);
      expect(events.status).toBe(200);
      expect(events.body.items.filter((e: { session_id: string | null }) => e.session_id === c.id)).toEqual(
        [],
      );
      const row = await t.resources.database.db
        .selectFrom('project_events')
        .select(['type', 'visibility'])
        .where('session_id', '=', c.id)
        .execute();
      expect(row).toEqual([{ type: 'floor.committed', visibility: 'internal' }]);
    });

    it('without input_message answers the pending user message; then 409 no_pending_input', async () => {
      const c = await newConversation();
      const empty = await respond(c.id, {});
      expect(empty.status).toBe(409);
      expect(empty.body.error.code).toBe('no_pending_input');

      const appended = await appendMessage(t, c.id, 'user', 'Pending question');
      fake.script({ reply: 'Answer.' });
      const res = await respond(c.id, {});
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ floor_id: appended.floor_id, generated_text: 'Answer.' });
      expect(fake.requests[0].messages.at(-1)).toEqual({ role: 'user', content: 'Pending question' });

      const again = await respond(c.id, {});
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('no_pending_input');
      expect(fake.requests).toHaveLength(1);
    });

    it('409 missing_effective_user_tail; 400 invalid_message_role / empty_message_content; nothing appended', async () => {
      const c = await newConversation();
      await appendMessage(t, c.id, 'assistant', 'I spoke last');
      const tail = await respond(c.id, {});
      expect(tail.status).toBe(409);
      expect(tail.body.error.code).toBe('missing_effective_user_tail');
      const system = await respond(c.id, {
        input_message: { role: 'system', content: 'Only a system note' },
      });
      expect(system.status).toBe(409);
      expect(system.body.error.code).toBe('missing_effective_user_tail');
      const role = await respond(c.id, { input_message: { role: 'tool', content: 'x' } });
      expect(role.status).toBe(400);
      expect(role.body.error.code).toBe('invalid_message_role');
      const content = await respond(c.id, { input_message: { role: 'user', content: ' ' } });
      expect(content.status).toBe(400);
      expect(content.body.error.code).toBe('empty_message_content');
      expect((await transcript(c.id)).floors).toHaveLength(1);
      expect(fake.requests).toHaveLength(0);
    });

    it('dynamic_context reaches the model for this turn only and is never stored; limit 200000', async () => {
      const c = await newConversation();
      const context = `CTX-${'z'.repeat(199_996)}`;
      expect(context).toHaveLength(200_000);
      const res = await respond(c.id, {
        input_message: { role: 'user', content: 'Use it' },
        dynamic_context: context,
      });
      expect(res.status).toBe(200);
      const sent = fake.requests[0].messages;
      expect(sent.at(-1)).toEqual({ role: 'user', content: 'Use it' });
      expect(sent.at(-2)).toEqual({ role: 'system', content: context });
      const stored = JSON.stringify(await transcript(c.id));
      expect(stored).not.toContain('CTX-');
      const snapshot = await t.resources.database.db
        .selectFrom('floor_prompt_snapshots')
        .selectAll()
        .where('floor_id', '=', res.body.data.floor_id)
        .executeTakeFirst();
      expect(JSON.stringify(snapshot ?? {})).not.toContain('CTX-');

      const over = await respond(c.id, {
        input_message: { role: 'user', content: 'Too much' },
        dynamic_context: 'x'.repeat(200_001),
      });
      expect(over.status).toBe(400);
      expect(over.body.error.code).toBe('validation_error');

      fake.reset();
      const blank = await respond(c.id, {
        input_message: { role: 'user', content: 'Blank' },
        dynamic_context: '  ',
      });
      expect(blank.status).toBe(200);
      expect(fake.requests[0].messages.some((m) => m.content === '  ')).toBe(false);
    });

    it('validates generation_params and tool_transport_preference', async () => {
      const c = await newConversation({ purpose: 'drafting' });
      const bodies = [
        { generation_params: { temperature: 2.5 } },
        { generation_params: { top_p: 1.5 } },
        { generation_params: { max_output_tokens: 0 } },
        { generation_params: { max_context_tokens: 0 } },
        { generation_params: { reasoning_effort: 'x'.repeat(65) } },
        { generation_params: { seed: 3 } },
        { tool_transport_preference: 'carrier_pigeon' },
      ];
      for (const body of bodies) {
        const res = await respond(c.id, { input_message: { role: 'user', content: 'x' }, ...body });
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
          body,
          status: 400,
          code: 'validation_error',
        });
      }
      // A transport other than auto outside a graph-assistant conversation is spec 2's invalid_tool_mode.
      for (const preference of ['native', 'text_protocol']) {
        const res = await respond(c.id, {
          input_message: { role: 'user', content: 'x' },
          tool_transport_preference: preference,
        });
        expect({ status: res.status, error: res.body.error }).toEqual({
          status: 400,
          error: expect.objectContaining({
            code: 'invalid_tool_mode',
            details: {
              tool_transport_preference: preference,
              purpose: 'drafting',
              allowed_purpose: 'graph-assistant',
            },
          }),
        });
      }
      expect(fake.requests).toHaveLength(0);
      expect((await transcript(c.id)).floors).toHaveLength(0);
      const auto = await respond(c.id, {
        input_message: { role: 'user', content: 'x' },
        tool_transport_preference: 'auto',
      });
      expect(auto.status).toBe(200);
      const graph = await newConversation({ purpose: 'graph-assistant' });
      const ok = await respond(graph.id, {
        input_message: { role: 'user', content: 'x' },
        tool_transport_preference: 'native',
        generation_params: {
          reasoning_effort: 'x'.repeat(64),
          temperature: 0.5,
          top_p: 1,
          max_output_tokens: 50,
        },
      });
      expect(ok.status).toBe(200);
    });

    it('SSE: start, run, chunks, run, done with the temporary result', async () => {
      const c = await newConversation();
      fake.script({ chunks: ['Hel', 'lo'] });
      const call = await SseCall.open(t, 'POST', `/temporary-conversations/${c.id}/respond`, {
        input_message: { role: 'user', content: 'Stream it' },
      });
      await call.waitForEnd();
      expect(call.status).toBe(200);
      expect(call.headers['content-type']).toMatch(/text\/event-stream/);
      const types = call.types;
      expect(types[0]).toBe('start');
      expect(types[1]).toBe('run');
      expect(types.filter((x) => x === 'chunk')).toHaveLength(2);
      expect(types.slice(-2)).toEqual(['run', 'done']);
      expect(types.indexOf('chunk')).toBeGreaterThan(1);
      const start = call.dataOf('start')[0];
      expect(start).toMatchObject({ conversation_id: c.id, branch_id: 'main', floor_no: 0 });
      const done = call.dataOf('done')[0];
      expect(done).toMatchObject({
        conversation_id: c.id,
        generated_text: 'Hello',
        final_state: 'committed',
        summaries: [],
        total_usage: expect.any(Object),
        page_id: expect.any(String),
      });
      expect(
        call
          .dataOf<{ chunk: string }>('chunk')
          .map((x) => x.chunk)
          .join(''),
      ).toBe('Hello');
    });

    it('409 conversation_busy while a generation runs; cancel aborts it', async () => {
      const c = await newConversation();
      fake.script({ hang: true });
      const call = await SseCall.open(t, 'POST', `/temporary-conversations/${c.id}/respond`, {
        input_message: { role: 'user', content: 'Wait' },
      });
      await call.waitFor((x) => x.types.includes('run'), 10_000, 'the run event');
      const busy = await respond(c.id, { input_message: { role: 'user', content: 'Me too' } });
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('conversation_busy');
      const pendingless = await respond(c.id, {});
      expect(pendingless.status).toBe(409);
      expect(pendingless.body.error.code).toBe('conversation_busy');
      const append = await post(`/temporary-conversations/${c.id}/messages`, { role: 'user', content: 'x' });
      expect(append.status).toBe(409);
      expect(append.body.error.code).toBe('conversation_busy');

      const cancelled = await post(`/temporary-conversations/${c.id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data.status).toBe('cancelled');
      await call.waitForEnd();
      expect(call.types.at(-1)).toBe('error');
      expect(call.dataOf('error')[0]).toMatchObject({ code: 'generation_cancelled' });
      const logs = (await operationLogsOf(t, c.id)).filter(
        (l) => l.action === 'temporary_conversation.cancel',
      );
      expect(logs[0].metadata).toMatchObject({ aborted_run_id: expect.stringMatching(/^run_/) });
    });
    it.each(['finalize', 'discard'])(
      '%s while a generation runs stops it too: no floor is committed after the move',
      async (move) => {
        const c = await newConversation();
        fake.script({ hang: true });
        const call = await SseCall.open(t, 'POST', `/temporary-conversations/${c.id}/respond`, {
          input_message: { role: 'user', content: 'Wait' },
        });
        await call.waitFor((x) => x.types.includes('run'), 10_000, 'the run event');
        const ended = await post(`/temporary-conversations/${c.id}/${move}`);
        expect(ended.status).toBe(200);
        await call.waitForEnd();
        expect(call.types.at(-1)).toBe('error');
        expect(call.dataOf('error')[0]).toMatchObject({ code: 'generation_cancelled' });
        const logs = (await operationLogsOf(t, c.id)).filter(
          (l) => l.action === `temporary_conversation.${move}`,
        );
        expect(logs[0].metadata).toMatchObject({ aborted_run_id: expect.stringMatching(/^run_/) });
        const floors = await t.resources.database.db
          .selectFrom('floors')
          .select(['state'])
          .where('session_id', '=', c.id)
          .execute();
        expect(floors.filter((f) => f.state === 'committed')).toHaveLength(0);
      },
    );

    it('a move that found no run to stop (it came between the check and the run) still keeps the reply out: 409 conversation_not_active', async () => {
      const c = await newConversation();
      fake.script({ reply: 'Too late.', delayMs: 300 });
      const pending = respond(c.id, { input_message: { role: 'user', content: 'Race' } }).then((r) => r);
      const db = t.resources.database.db;
      await until(async () => fake.requests.length === 1, 10_000, 'the model call');
      // What a finalize that ran before the run existed leaves: the row finalized, the run untouched.
      await db
        .updateTable('temporary_conversations')
        .set({ status: 'finalized', finalized_at: Date.now(), updated_at: Date.now() })
        .where('session_id', '=', c.id)
        .execute();
      const res = await pending;
      expect([res.status, res.body.error?.code]).toEqual([409, 'conversation_not_active']);
      const floors = await db.selectFrom('floors').select(['state']).where('session_id', '=', c.id).execute();
      expect(floors).toEqual([]);
      const run = await db
        .selectFrom('generation_runs')
        .select(['status'])
        .where('session_id', '=', c.id)
        .executeTakeFirstOrThrow();
      expect(run.status).toBe('failed');
    });
  });

  describe('retry and retry-step', () => {
    it('retry adds a new output page version and keeps the old one', async () => {
      const c = await newConversation();
      fake.script({ reply: 'First.' });
      const first = await respond(c.id, { input_message: { role: 'user', content: 'Q' } });
      fake.script({ reply: 'Second.' });
      const res = await post(`/temporary-conversations/${c.id}/retry`, {
        floor_id: first.body.data.floor_id,
        confirmed_execution_ids: [],
        confirmed_session_state_mutation_ids: [],
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        conversation_id: c.id,
        branch_id: 'main',
        floor_id: first.body.data.floor_id,
        generated_text: 'Second.',
      });
      expect(res.body.data.page_id).not.toBe(first.body.data.page_id);
      const outputs = (await transcript(c.id)).floors[0].pages.filter(
        (p: { page_kind: string }) => p.page_kind === 'output',
      );
      expect(outputs.map((p: { version: number; is_active: boolean }) => [p.version, p.is_active])).toEqual([
        [1, false],
        [2, true],
      ]);
    });

    it('404 retry_target_not_found for an unknown floor and a floor of another conversation', async () => {
      const c = await newConversation();
      const other = await newConversation();
      const { floor_id } = await appendMessage(t, other.id, 'user', 'elsewhere');
      for (const floorId of ['flr_missing', floor_id]) {
        const res = await post(`/temporary-conversations/${c.id}/retry`, { floor_id: floorId });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('retry_target_not_found');
      }
      const missing = await post(`/temporary-conversations/${c.id}/retry`, {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('validation_error');
      const system = await appendMessage(t, c.id, 'system', 'no user here');
      const tail = await post(`/temporary-conversations/${c.id}/retry`, { floor_id: system.floor_id });
      expect(tail.status).toBe(409);
      expect(tail.body.error.code).toBe('missing_effective_user_tail');
    });

    it('retry-step from step 1 regenerates, with discarded_from_step_index and no side effects (JSON and SSE)', async () => {
      const c = await newConversation();
      fake.script({ reply: 'One.' });
      const first = await respond(c.id, { input_message: { role: 'user', content: 'Q' } });
      fake.script({ reply: 'Two.' });
      const res = await post(`/temporary-conversations/${c.id}/retry-step`, {
        floor_id: first.body.data.floor_id,
        from_step_index: 1,
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        conversation_id: c.id,
        generated_text: 'Two.',
        discarded_from_step_index: 1,
        irreversible_side_effects: [],
      });
      fake.script({ reply: 'Three.' });
      const call = await SseCall.open(t, 'POST', `/temporary-conversations/${c.id}/retry-step`, {
        floor_id: first.body.data.floor_id,
        from_step_index: 1,
      });
      await call.waitForEnd();
      expect(call.dataOf('done')[0]).toMatchObject({
        conversation_id: c.id,
        generated_text: 'Three.',
        discarded_from_step_index: 1,
        irreversible_side_effects: [],
      });
      for (const from of [0, 1.5]) {
        const bad = await post(`/temporary-conversations/${c.id}/retry-step`, {
          floor_id: first.body.data.floor_id,
          from_step_index: from,
        });
        expect(bad.status).toBe(400);
        expect(bad.body.error.code).toBe('validation_error');
      }
      const beyond = await post(`/temporary-conversations/${c.id}/retry-step`, {
        floor_id: first.body.data.floor_id,
        from_step_index: 2,
      });
      expect(beyond.status).toBe(404);
      expect(beyond.body.error.code).toBe('retry_step_not_found');
    });

    it('409 conversation_not_active on respond and retry once expired', async () => {
      const c = await newConversation({ retention_policy: 'ttl', ttl_seconds: 600 });
      const first = await respond(c.id, { input_message: { role: 'user', content: 'Q' } });
      await expireNow(t, c.id);
      fake.reset();
      for (const res of [
        await respond(c.id, { input_message: { role: 'user', content: 'Q2' } }),
        await post(`/temporary-conversations/${c.id}/retry`, { floor_id: first.body.data.floor_id }),
        await post(`/temporary-conversations/${c.id}/retry-step`, {
          floor_id: first.body.data.floor_id,
          from_step_index: 1,
        }),
      ]) {
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe('conversation_not_active');
      }
      expect(fake.requests).toHaveLength(0);
    });
  });

  describe('export', () => {
    it('stages the latest output page for a page of the source session, without changing it', async () => {
      fake.script({ reply: 'Original.' });
      const src = await post(`/sessions/${source.id}/respond`, { message: 'Source turn' });
      const targetPageId = src.body.data.page_id as string;
      const c = await newConversation();
      const none = await post(`/temporary-conversations/${c.id}/export`, {
        target: 'page_staged_write',
        target_page_id: targetPageId,
        reason: 'better wording',
      });
      expect(none.status).toBe(409);
      expect(none.body.error.code).toBe('no_exportable_output');

      fake.script({ reply: 'Improved.' });
      const turn = await respond(c.id, { input_message: { role: 'user', content: 'Improve it' } });
      const res = await post(`/temporary-conversations/${c.id}/export`, {
        target: 'page_staged_write',
        target_page_id: targetPageId,
        reason: 'better wording',
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        conversation_id: c.id,
        target: 'page_staged_write',
        staged_write_id: expect.stringMatching(/^psw_/),
        target_page_id: targetPageId,
        source_page_id: turn.body.data.page_id,
        created_at: expect.any(Number),
        status: 'staged',
      });
      const staged = await t.resources.database.db
        .selectFrom('page_staged_writes')
        .selectAll()
        .where('id', '=', res.body.data.staged_write_id)
        .executeTakeFirstOrThrow();
      expect(staged).toMatchObject({ session_id: source.id, reason: 'better wording', status: 'staged' });
      expect(staged.content).toEqual([{ role: 'assistant', content: 'Improved.' }]);
      // The page's candidates list it; the conversation's own page is not a page to that route.
      const listed = await get(`/pages/${targetPageId}/staged-writes`);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual({
        page_id: targetPageId,
        floor_id: src.body.data.floor_id,
        session_id: source.id,
        branch_id: expect.any(String),
        items: [
          {
            id: res.body.data.staged_write_id,
            target: 'page_staged_write',
            status: 'staged',
            target_page_id: targetPageId,
            session_id: source.id,
            source_kind: 'temporary_conversation',
            source_conversation_id: c.id,
            source_page_id: turn.body.data.page_id,
            source_job_id: null,
            reason: 'better wording',
            messages: [{ role: 'assistant', content: 'Improved.' }],
            created_by_client_id: expect.any(String),
            created_at: res.body.data.created_at,
          },
        ],
      });
      const own = await get(`/pages/${turn.body.data.page_id}/staged-writes`);
      expect([own.status, own.body.error?.code]).toEqual([404, 'page_not_found']);
      // The target page is unchanged.
      const floors = (await get(`/sessions/${source.id}/floors`)).body.data;
      const page = floors
        .flatMap((f: { pages: Array<{ id: string }> }) => f.pages)
        .find((p: { id: string }) => p.id === targetPageId);
      expect(page.messages[0].content).toBe('Original.');
      const log = (await operationLogsOf(t, c.id)).find((l) => l.action === 'temporary_conversation.export');
      expect(log?.metadata).toMatchObject({
        staged_write_id: res.body.data.staged_write_id,
        target_page_id: targetPageId,
      });

      // Errors: another session's page, a Project-made conversation, a wrong target, a missing reason.
      const elsewhere = await createSession(t);
      fake.script({ reply: 'x' });
      const otherPage = (await post(`/sessions/${elsewhere.id}/respond`, { message: 'x' })).body.data.page_id;
      const projectMade = await createTemporary(t, { projectId: source.projectId });
      fake.script({ reply: 'y' });
      await respond(projectMade.id, { input_message: { role: 'user', content: 'y' } });
      for (const [id, pageId] of [
        [c.id, otherPage],
        [c.id, 'pg_missing'],
        [projectMade.id, targetPageId],
      ]) {
        const r = await post(`/temporary-conversations/${id}/export`, {
          target: 'page_staged_write',
          target_page_id: pageId,
          reason: 'r',
        });
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe('page_not_found');
      }
      for (const body of [
        { target: 'page_commit', target_page_id: targetPageId, reason: 'r' },
        { target_page_id: targetPageId, reason: 'r' },
        { target: 'page_staged_write', target_page_id: targetPageId },
      ]) {
        const r = await post(`/temporary-conversations/${c.id}/export`, body);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('validation_error');
      }
    });
  });

  describe('inspect', () => {
    it('a client-visible conversation is not trimmed', async () => {
      const c = await newConversation();
      await appendMessage(t, c.id, 'user', 'Visible words');
      const res = await get(`/temporary-conversations/${c.id}/inspect`);
      expect(res.status).toBe(200);
      const data = res.body.data;
      expect(data).toMatchObject({
        conversation: { id: c.id, status: 'active' },
        agent_private: false,
        transcript_restricted: false,
        agent_origin: null,
        cleanup: { cleaned: false, cleaned_at: null, retention_policy: 'delete_on_finalize' },
      });
      expect(data.transcript.floors[0].pages[0].messages[0]).toMatchObject({
        content: 'Visible words',
        restricted: false,
        content_length: 13,
      });
    });

    it('an internal agent conversation is restricted unless the owner asks include_agent_private', async () => {
      const origin = { agent_type_id: 'agt_1', job_id: 'job_1' };
      const internal = await createInternalTemporary(t, { session_id: source.id }, origin);
      const id = internal.session_id;
      await t.app
        .get(AppendTemporaryMessageUseCase, { strict: false })
        .execute(await adminActor(), id, { role: 'user', content: 'Secret plan' }, { allowInternal: true });

      const restricted = await get(`/temporary-conversations/${id}/inspect`);
      expect(restricted.status).toBe(200);
      expect(restricted.body.data).toMatchObject({
        conversation: { id, visibility: 'internal' },
        agent_private: true,
        transcript_restricted: true,
        agent_origin: null,
      });
      const message = restricted.body.data.transcript.floors[0].pages[0].messages[0];
      expect(message).toMatchObject({ content: null, restricted: true, content_length: 11, role: 'user' });
      expect(restricted.body.data.transcript.floors[0].reasoning_text).toBeNull();
      expect(JSON.stringify(restricted.body.data)).not.toContain('Secret plan');

      // An observer asking for the bodies still gets the restricted view, and no audit log is written.
      const asObserver = await get(
        `/temporary-conversations/${id}/inspect?include_agent_private=true`,
        observer.apiKey,
      );
      expect(asObserver.status).toBe(200);
      expect(asObserver.body.data.transcript_restricted).toBe(true);
      expect(JSON.stringify(asObserver.body.data)).not.toContain('Secret plan');
      const audits = async () =>
        (await operationLogsOf(t, id)).filter(
          (l) => l.action === 'temporary_conversation.transcript_inspect',
        );
      expect(await audits()).toHaveLength(0);

      for (const flag of ['true', '1']) {
        const full = await get(`/temporary-conversations/${id}/inspect?include_agent_private=${flag}`);
        expect(full.status).toBe(200);
        expect(full.body.data).toMatchObject({
          transcript_restricted: false,
          agent_private: true,
          agent_origin: origin,
        });
        expect(full.body.data.transcript.floors[0].pages[0].messages[0]).toMatchObject({
          content: 'Secret plan',
          restricted: false,
        });
      }
      expect(await audits()).toHaveLength(2);
      const off = await get(`/temporary-conversations/${id}/inspect?include_agent_private=0`);
      expect(off.body.data.transcript_restricted).toBe(true);
      const bad = await get(`/temporary-conversations/${id}/inspect?include_agent_private=yes`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('validation_error');
    });
  });

  describe('maintenance', () => {
    it('expires due ttl conversations, then cleans terminal bodies; keep_for_debug is never cleaned', async () => {
      const own = await createSession(t, { body: { title: 'Maintenance' } });
      const make = async (body: Record<string, unknown>, text: string) => {
        const c = await createTemporary(t, { sessionId: own.id }, body);
        await appendMessage(t, c.id, 'user', text);
        return c;
      };
      const finalized = await make({}, 'finalized body');
      const kept = await make({ retention_policy: 'keep_for_debug' }, 'kept body');
      const ttl = await make({ retention_policy: 'ttl', ttl_seconds: 3600 }, 'ttl body');
      const active = await make({}, 'active body');
      fake.script({ reply: 'model body', reasoning: 'thinking body' });
      await respond(finalized.id, { input_message: { role: 'user', content: 'second' } });
      await post(`/temporary-conversations/${finalized.id}/finalize`);
      await post(`/temporary-conversations/${kept.id}/discard`);
      await expireNow(t, ttl.id);
      const snapshotsOf = (id: string) =>
        t.resources.database.db
          .selectFrom('floor_prompt_snapshots')
          .select(['floor_id', 'snapshot'])
          .where('session_id', '=', id)
          .execute();
      // The stored prompt of the answered floor copies the messages ('second').
      expect(JSON.stringify(await snapshotsOf(finalized.id))).toContain('second');

      const result = await t.app
        .get(RunMaintenanceScanUseCase, { strict: false })
        .execute([ExpireTemporaryConversationsUseCase, CleanupTemporaryConversationsUseCase]);
      expect(result.steps.map((s) => [s.step, s.ok])).toEqual([
        ['temporary_conversation_expiry', true],
        ['temporary_conversation_cleanup', true],
      ]);
      expect((await conversationRow(t, ttl.id))!.status).toBe('expired');

      const db = t.resources.database.db;
      const contents = (id: string) =>
        db.selectFrom('messages').select(['content', 'created_at']).where('session_id', '=', id).execute();
      for (const id of [finalized.id, ttl.id]) {
        const rows = await contents(id);
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.every((r) => r.content === '' && r.created_at > 0)).toBe(true);
        expect((await conversationRow(t, id))!.cleaned_at).toEqual(expect.any(Number));
      }
      const floors = await db
        .selectFrom('floors')
        .select(['reasoning_text', 'state'])
        .where('session_id', '=', finalized.id)
        .execute();
      expect(floors).toHaveLength(2);
      expect(floors.every((f) => f.reasoning_text === null && f.state === 'committed')).toBe(true);
      expect(await snapshotsOf(finalized.id)).toEqual([]);
      expect((await contents(kept.id)).map((r) => r.content)).toEqual(['kept body']);
      expect((await contents(active.id)).map((r) => r.content)).toEqual(['active body']);
      expect((await conversationRow(t, kept.id))!.cleaned_at).toBeNull();

      // The resource and inspect show the cleanup.
      const detail = await get(`/temporary-conversations/${finalized.id}`);
      expect(detail.body.data.cleaned_at).toEqual(expect.any(Number));
      const inspect = await get(`/temporary-conversations/${finalized.id}/inspect`);
      expect(inspect.body.data.cleanup).toMatchObject({
        cleaned: true,
        retention_policy: 'delete_on_finalize',
      });
      expect(inspect.body.data.transcript.floors).toHaveLength(2);

      const logs = await db
        .selectFrom('operation_logs')
        .selectAll()
        .where('action', '=', 'temporary_conversation.cleanup')
        .execute();
      expect(logs).toHaveLength(1);
      // Earlier tests of this suite left terminal conversations too (one log per account, counts only).
      const counts = logs[0].metadata as { conversation_count: number; message_count: number };
      expect(counts.conversation_count).toBeGreaterThanOrEqual(2);
      expect(counts.message_count).toBeGreaterThanOrEqual(3);
      expect(JSON.stringify(logs[0])).not.toContain('body');

      // A second scan finds nothing.
      const again = await t.app.get(CleanupTemporaryConversationsUseCase, { strict: false }).execute();
      expect(again).toMatchObject({ conversations: 0 });
    });

    it('honours ENABLE_TEMPORARY_CONVERSATION_CLEANUP=false and the grace period', async () => {
      const c = await newConversation();
      await appendMessage(t, c.id, 'user', 'grace body');
      await post(`/temporary-conversations/${c.id}/discard`);
      const db = t.app.get(DB, { strict: false });
      const off = new CleanupTemporaryConversationsUseCase(db, {
        ...t.config,
        enableTemporaryConversationCleanup: false,
      });
      expect(await off.execute()).toEqual({ enabled: false, conversations: 0, messages: 0, accounts: 0 });
      const graced = new CleanupTemporaryConversationsUseCase(db, {
        ...t.config,
        temporaryConversationCleanupGraceMs: 3_600_000,
      });
      expect(await graced.execute()).toMatchObject({ enabled: true, conversations: 0 });
      expect((await conversationRow(t, c.id))!.cleaned_at).toBeNull();
      expect(await graced.execute(Date.now() + 3_600_001)).toMatchObject({ conversations: 1 });
      expect((await conversationRow(t, c.id))!.cleaned_at).toEqual(expect.any(Number));
    });
  });
});
