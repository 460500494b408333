import { createAccountCaller, addMember, type Caller } from '../support/factories/members';
import { findProject } from '../support/factories/projects';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  FAKE_KEY,
  floorsOf,
  runRow,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  until,
  type FakeModelServer,
} from './turns-support';

/**
 * `POST /sessions/:id/respond` and `/respond/stream` (issue 5 items 2-3): the commit, the SSE order,
 * cancellation, upstream failures, the generation lock, and every error code of the route.
 */
describe('turns: respond', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let stranger: Caller;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
    stranger = await createAccountCaller(t, { name: 'Stranger' });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const respond = (sessionId: string, body: Record<string, unknown>, key = ADMIN_KEY) =>
    t.http.post(`/sessions/${sessionId}/respond`).set('x-api-key', key).send(body);

  it('commits the turn: user and assistant messages, usage, operation log and floor.committed', async () => {
    const session = await createSession(t);
    fake.script({ reply: 'Hello, traveller.', usage: { prompt_tokens: 42, completion_tokens: 5 } });
    const res = await respond(session.id, { message: 'Hi there' });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      floor_no: 0,
      generated_text: 'Hello, traveller.',
      summaries: [],
      total_usage: { prompt_tokens: 42, completion_tokens: 5, total_tokens: 47 },
      final_state: 'committed',
    });
    expect(data.prompt_snapshot).toBeUndefined();
    expect(data.runtime_trace).toBeUndefined();

    const [floor] = await floorsOf(t, session.id);
    expect(floor).toMatchObject({ id: data.floor_id, state: 'committed', token_in: 42, token_out: 5 });
    const input = floor.pages.find((p) => p.page_kind === 'input')!;
    const output = floor.pages.find((p) => p.page_kind === 'output')!;
    expect(input.messages.map((m) => [m.role, m.content])).toEqual([['user', 'Hi there']]);
    expect(output).toMatchObject({ id: data.page_id, is_active: true, version: 1 });
    expect(output.messages.map((m) => [m.role, m.content])).toEqual([['assistant', 'Hello, traveller.']]);

    // What reached the model: the user's message last, through the OpenAI SDK with the key.
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].messages.at(-1)).toEqual({ role: 'user', content: 'Hi there' });
    expect(fake.requests[0].headers.authorization).toBe(`Bearer ${FAKE_KEY}`);

    const run = await runRow(t, data.run_id);
    expect(run).toMatchObject({ status: 'completed', floor_id: data.floor_id, run_type: 'respond' });

    const db = t.resources.database.db;
    const log = await db
      .selectFrom('operation_logs')
      .selectAll()
      .where('run_id', '=', data.run_id)
      .executeTakeFirst();
    expect(log).toMatchObject({ action: 'respond', status: 'succeeded', floor_id: data.floor_id });
    const meta = log!.metadata as Record<string, unknown>;
    expect(meta).toMatchObject({
      input_length: 8,
      output_length: 17,
      prompt_token_count: 42,
      completion_token_count: 5,
    });
    expect(JSON.stringify(log)).not.toContain('Hello, traveller');
    expect(JSON.stringify(log)).not.toContain('Hi there');

    const event = await db
      .selectFrom('project_events')
      .selectAll()
      .where('project_id', '=', session.projectId)
      .where('type', '=', 'floor.committed')
      .executeTakeFirst();
    expect(event).toMatchObject({ floor_id: data.floor_id, page_id: data.page_id, visibility: 'project' });
    expect(event!.payload).toMatchObject({
      floor_no: 0,
      run_id: data.run_id,
      run_type: 'respond',
      output_length: 17,
    });
  });

  it('streams start, run, chunks and done in order, flushed one by one', async () => {
    const session = await createSession(t);
    fake.script({ chunks: ['Once ', 'upon ', 'a time'], chunkDelayMs: 30, reasoning: 'thinking…' });
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'Tell me a story',
      debug_options: { include_prompt_snapshot: true, include_runtime_trace: true },
    });
    expect(call.status).toBe(200);
    expect(call.headers['content-type']).toMatch(/text\/event-stream/);
    await call.waitForEnd();
    const types = call.types;
    expect(types[0]).toBe('start');
    expect(types[1]).toBe('run');
    expect(types.slice(-2)).toEqual(['run', 'done']);
    expect(types.filter((x) => x === 'chunk')).toHaveLength(3);
    expect(types).toContain('reasoning');
    // Sequence ids 1..n with no gap.
    expect(call.messages.map((m) => Number(m.id))).toEqual(call.messages.map((_, i) => i + 1));

    const start = call.dataOf('start')[0];
    const done = call.dataOf<Record<string, unknown>>('done')[0];
    expect(start).toMatchObject({ floor_no: 0, floor_id: done.floor_id, branch_id: done.branch_id });
    expect(
      call
        .dataOf<{ chunk: string }>('chunk')
        .map((c) => c.chunk)
        .join(''),
    ).toBe('Once upon a time');
    expect(done).toMatchObject({
      generated_text: 'Once upon a time',
      final_state: 'committed',
      reasoning_text: 'thinking…',
    });
    expect(done.prompt_snapshot).toMatchObject({ prompt_digest: expect.stringMatching(/^sha256:/) });
    expect(done.runtime_trace).toMatchObject({ provider: { provider: 'openai', model: 'fake-model' } });

    const runs = call.dataOf<Record<string, any>>('run');
    expect(runs[0]).toMatchObject({
      status: 'running',
      run_type: 'respond',
      pending_output: { state: 'pending', text: '' },
    });
    expect(runs.at(-1)).toMatchObject({
      status: 'completed',
      pending_output: { state: 'complete', text: 'Once upon a time' },
    });
    const [floor] = await floorsOf(t, session.id);
    expect(floor.reasoning_text).toBe('thinking…');
  });

  it('answers SSE on /respond when the client accepts text/event-stream', async () => {
    const session = await createSession(t);
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond`, { message: 'ping' });
    await call.waitForEnd();
    expect(call.types[0]).toBe('start');
    expect(call.dataOf<{ generated_text: string }>('done')[0].generated_text).toBe('ECHO: ping');
  });

  it('aborts the upstream call when the stream client goes away, leaving no floor', async () => {
    const session = await createSession(t);
    fake.script({ chunks: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 400 });
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, { message: 'go' });
    await call.waitFor((c) => c.types.includes('chunk'), 10_000, 'a chunk');
    const runId = call.dataOf<{ run_id: string }>('start')[0].run_id;
    call.drop();
    const closed = await fake.waitForClientClose(10_000);
    expect(closed.clientClosed).toBe(true);
    await until(
      async () => (await runRow(t, runId))?.status === 'cancelled',
      10_000,
      'the run to be cancelled',
    );
    expect(await runRow(t, runId)).toMatchObject({
      status: 'cancelled',
      error: { code: 'generation_cancelled' },
    });
    expect(await floorsOf(t, session.id)).toEqual([]);
    const db = t.resources.database.db;
    const log = await db
      .selectFrom('operation_logs')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirst();
    expect(log).toMatchObject({ action: 'respond', status: 'cancelled' });
    expect(log!.metadata).toMatchObject({
      error_code: 'generation_cancelled',
      cancel_reason: 'client_disconnected',
    });
    // The branch is free again.
    const again = await respond(session.id, { message: 'again' });
    expect(again.status).toBe(200);
  });

  it('answers 499 generation_cancelled on the JSON route when the run is cancelled', async () => {
    const session = await createSession(t);
    fake.script({ hang: true });
    const pending = respond(session.id, { message: 'wait' }).then((r) => r);
    const db = t.resources.database.db;
    let runId = '';
    await until(async () => {
      const run = await db
        .selectFrom('generation_runs')
        .select('id')
        .where('session_id', '=', session.id)
        .executeTakeFirst();
      runId = run?.id ?? '';
      return runId !== '';
    });
    const cancel = await t.http.post(`/runs/${runId}/cancel`).set('x-api-key', ADMIN_KEY);
    expect(cancel.status).toBe(202);
    const res = await pending;
    expect(res.status).toBe(499);
    expect(res.body.error.code).toBe('generation_cancelled');
    expect(await floorsOf(t, session.id)).toEqual([]);
    expect((await fake.waitForClientClose(5000)).clientClosed).toBe(true);
  });

  it('answers 504 generation_timeout when the model does not answer in time', async () => {
    const session = await createSession(t);
    fake.script({ hang: true });
    const res = await respond(session.id, { message: 'slow', generation_params: { timeout_ms: 300 } });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe('generation_timeout');
    expect(await floorsOf(t, session.id)).toEqual([]);
  });

  it('answers an upstream failure as 502 with its status and never the key; SSE gets an error event', async () => {
    const session = await createSession(t);
    fake.script({ status: 500, errorBody: { error: { message: `bad key ${FAKE_KEY}` } } });
    const res = await respond(session.id, { message: 'x', generation_params: { timeout_ms: 5000 } });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({
      code: 'generation_upstream_failed',
      details: { upstream_status: 500 },
    });
    expect(res.text).not.toContain(FAKE_KEY);
    expect(await floorsOf(t, session.id)).toEqual([]);

    fake.script({ status: 503 }, { status: 503 }, { status: 503 });
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'x',
      generation_params: { timeout_ms: 5000 },
    });
    await call.waitForEnd();
    expect(call.status).toBe(200);
    expect(call.types.at(-1)).toBe('error');
    expect(call.dataOf('error')[0]).toMatchObject({ code: 'generation_upstream_failed' });
    expect(await floorsOf(t, session.id)).toEqual([]);
  });

  it('lets exactly one of 20 concurrent respond calls on a branch commit; the others get generation_conflict', async () => {
    const session = await createSession(t);
    // Every call is slow: the provider call may start before the lock is taken, so whichever request wins
    // must still be generating while the other 19 arrive.
    fake.script(...Array.from({ length: 20 }, () => ({ reply: 'only one', delayMs: 2000 })));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => respond(session.id, { message: `m${i}` })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const r of results.filter((x) => x.status === 409))
      expect(r.body.error.code).toBe('generation_conflict');
    const floors = await floorsOf(t, session.id);
    expect(floors).toHaveLength(1);
    expect(floors[0].state).toBe('committed');
    // Only the winner called the model: a respond on a branch this process is already starting or
    // running a turn on waits for the lock before its provider call, and gets its 409 first.
    expect(fake.requests).toHaveLength(1);
  });

  it('continues from the head: floor numbers grow and source_floor_id must be the head', async () => {
    const session = await createSession(t);
    const first = await respond(session.id, { message: 'one' });
    const second = await respond(session.id, { message: 'two', source_floor_id: first.body.data.floor_id });
    expect(second.status).toBe(200);
    expect(second.body.data.floor_no).toBe(1);
    // The model saw the first turn.
    expect(fake.requests.at(-1)!.messages.slice(-3)).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'ECHO: one' },
      { role: 'user', content: 'two' },
    ]);
    const stale = await respond(session.id, { message: 'three', source_floor_id: first.body.data.floor_id });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('generation_target_stale');
    expect(await floorsOf(t, session.id)).toHaveLength(2);
  });

  describe('errors', () => {
    it('400 validation_error for an empty, blank or missing message and bad params', async () => {
      const session = await createSession(t);
      for (const body of [
        {},
        { message: '' },
        { message: '   ' },
        { message: 'x', generation_params: { temperature: 2.5 } },
        { message: 'x', generation_params: { timeout_ms: 99 } },
        { message: 'x', unknown: 1 },
      ]) {
        const res = await respond(session.id, body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
      }
      expect(
        (
          await respond(session.id, {
            message: 'x',
            generation_params: { temperature: 2, timeout_ms: 100000 },
          })
        ).status,
      ).toBe(200);
      expect(await floorsOf(t, session.id)).toHaveLength(1);
    });

    it('400 invalid_injection_payload over 32 request injections; 32 are accepted', async () => {
      const session = await createSession(t);
      const item = { source_kind: 'client_injection', title: 't', content: 'c', placement: 'after_history' };
      const over = await respond(session.id, {
        message: 'x',
        prompt_runtime_injections: Array(33).fill(item),
      });
      expect(over.status).toBe(400);
      expect(over.body.error.code).toBe('invalid_injection_payload');
      expect(await floorsOf(t, session.id)).toEqual([]);
      const ok = await respond(session.id, { message: 'x', prompt_runtime_injections: Array(32).fill(item) });
      expect(ok.status).toBe(200);
    });

    it('404 for a missing session, another account’s session and an unknown branch', async () => {
      const session = await createSession(t);
      const missing = await respond('ses_missing', { message: 'x' });
      expect(missing.status).toBe(404);
      const foreign = await respond(session.id, { message: 'x' }, stranger.apiKey);
      expect(foreign.status).toBe(404);
      expect(foreign.text).not.toContain(session.id.slice(4));
      const branch = await respond(session.id, { message: 'x', branch_id: 'br_missing' });
      expect(branch.status).toBe(404);
      expect(branch.body.error.code).toBe('branch_not_found');
      const source = await respond(session.id, { message: 'x', source_floor_id: 'flr_missing' });
      expect(source.status).toBe(404);
      expect(source.body.error.code).toBe('source_floor_not_found');
      expect(fake.requests).toHaveLength(0);
    });

    it('403 for a member without write access', async () => {
      const session = await createSession(t);
      const project = (await findProject(t, session.projectId))!;
      const observer = await createAccountCaller(t, { name: 'Observer' });
      await addMember(t, project, observer, 'observer');
      const res = await respond(session.id, { message: 'x' }, observer.apiKey);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('project_access_denied');
    });

    it('409 session_archived for an archived session', async () => {
      const session = await createSession(t);
      const patch = await t.http
        .patch(`/sessions/${session.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'archived' });
      expect(patch.status).toBe(200);
      const res = await respond(session.id, { message: 'x' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('session_archived');
      expect(fake.requests).toHaveLength(0);
    });
  });
});
