import http from 'node:http';
import { createSession } from '../support/factories/sessions';
import { projectEventRows } from '../support/factories/derived-outputs';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  floorsOf,
  runRow,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  until,
  type FakeModelServer,
  type Provider,
} from './turns-support';

type Json = Record<string, any>;

/**
 * The retry routes with every shared field and both transports, and the cases of issue 5 that other
 * suites show only on respond: a JSON client that goes away, an SSE timeout, another session's floor or
 * branch on respond, `floor.committed` of a retry.
 */
describe('turn routes: shared fields and transports', () => {
  let fake: FakeModelServer;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const post = (path: string, body: object = {}) => t.http.post(path).set('x-api-key', ADMIN_KEY).send(body);
  const injection = (title: string) => ({
    source_kind: 'client_injection',
    title,
    content: `INJECTED ${title}`,
    placement: 'after_history',
  });

  /** A session with one committed turn: its floor and its input user message. */
  async function oneTurn() {
    const session = await createSession(t);
    const res = await post(`/sessions/${session.id}/respond`, { message: 'first words' });
    expect(res.status).toBe(200);
    const [floor] = await floorsOf(t, session.id);
    const userMessage = floor.pages.find((p) => p.page_kind === 'input')!.messages[0];
    return { session, floorId: floor.id, userMessageId: userMessage.id };
  }

  const routes = (c: Awaited<ReturnType<typeof oneTurn>>) =>
    [
      ['regenerate', `/sessions/${c.session.id}/regenerate`, {}],
      ['retry', `/floors/${c.floorId}/retry`, {}],
      ['retry-step', `/floors/${c.floorId}/retry-step`, { from_step_index: 1 }],
      [
        'edit-and-regenerate',
        `/messages/${c.userMessageId}/edit-and-regenerate`,
        { content: 'edited words' },
      ],
    ] as const;

  it('every retry route applies request injections and returns the debug parts asked for', async () => {
    const c = await oneTurn();
    for (const [name, path, body] of routes(c)) {
      fake.reset();
      const res = await post(path, {
        ...body,
        prompt_runtime_injections: [injection(name)],
        debug_options: { include_runtime_trace: true, include_prompt_snapshot: true },
      });
      expect([name, res.status]).toEqual([name, 200]);
      expect(JSON.stringify(fake.requests[0].messages)).toContain(`INJECTED ${name}`);
      expect(res.body.data.runtime_trace.injection).toMatchObject({ requested_count: 1, applied_count: 1 });
      expect(res.body.data).toHaveProperty('prompt_snapshot');
    }
    // Over the per-request limit: refused before the model is called, nothing written.
    const fresh = await oneTurn();
    const before = await floorsOf(t, fresh.session.id);
    fake.reset();
    for (const [name, path, body] of routes(fresh)) {
      const res = await post(path, {
        ...body,
        prompt_runtime_injections: Array.from({ length: 33 }, (_, i) => injection(`${name}-${i}`)),
      });
      expect([name, res.status, res.body.error.code]).toEqual([name, 400, 'invalid_injection_payload']);
    }
    expect(fake.requests).toHaveLength(0);
    expect(await floorsOf(t, fresh.session.id)).toEqual(before);
  });

  it('every retry route streams start, run, chunks and done with Accept: text/event-stream', async () => {
    const c = await oneTurn();
    for (const [name, path, body] of routes(c)) {
      fake.script({ chunks: ['Re', 'tried'] });
      const call = await SseCall.open(t, 'POST', path, body);
      await call.waitForEnd();
      expect([name, call.status]).toEqual([name, 200]);
      const types = call.types.filter((type) => type !== 'run');
      expect([name, types]).toEqual([name, ['start', 'chunk', 'chunk', 'done']]);
      expect(call.types.indexOf('run')).toBeGreaterThan(0);
      expect(call.dataOf<Json>('done')[0].generated_text).toBe('Retried');
    }
  });

  it('an SSE turn past its timeout ends with an error event (generation_timeout) and leaves no floor', async () => {
    const session = await createSession(t);
    fake.script({ hang: true });
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'slow',
      generation_params: { timeout_ms: 300 },
    });
    await call.waitForEnd();
    expect(call.status).toBe(200);
    expect(call.types[0]).toBe('start');
    expect(call.types.at(-1)).toBe('error');
    expect(call.dataOf<Json>('error')[0]).toMatchObject({ code: 'generation_timeout' });
    expect(await floorsOf(t, session.id)).toEqual([]);
  });

  it('a JSON respond whose client goes away aborts the upstream call and records the cancellation', async () => {
    const session = await createSession(t);
    fake.script({ hang: true });
    const req = http.request(`${t.baseUrl}/sessions/${session.id}/respond`, {
      method: 'POST',
      headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ message: 'leaving soon' }));
    await until(() => fake.requests.length === 1, 10_000, 'the model call');
    req.destroy();
    const closed = await fake.waitForClientClose(10_000);
    expect(closed.clientClosed).toBe(true);
    const db = t.resources.database.db;
    const run = await db
      .selectFrom('generation_runs')
      .select('id')
      .where('session_id', '=', session.id)
      .executeTakeFirstOrThrow();
    await until(async () => (await runRow(t, run.id))?.status === 'cancelled', 10_000, 'the cancellation');
    const log = await db
      .selectFrom('operation_logs')
      .selectAll()
      .where('run_id', '=', run.id)
      .executeTakeFirstOrThrow();
    expect(log).toMatchObject({ action: 'respond', status: 'cancelled' });
    expect(log.metadata).toMatchObject({ cancel_reason: 'client_disconnected' });
    expect(await floorsOf(t, session.id)).toEqual([]);
  });

  it("respond with another session's floor or branch is 404 before the model is called", async () => {
    const mine = await oneTurn();
    const other = await oneTurn();
    const [otherFloor] = await floorsOf(t, other.session.id);
    const branch = await post(`/floors/${otherFloor.id}/branch`, { name: 'theirs' });
    expect(branch.status).toBe(201);
    fake.reset();
    const floorRes = await post(`/sessions/${mine.session.id}/respond`, {
      message: 'x',
      source_floor_id: other.floorId,
    });
    expect([floorRes.status, floorRes.body.error.code]).toEqual([404, 'source_floor_not_found']);
    const branchRes = await post(`/sessions/${mine.session.id}/respond`, {
      message: 'x',
      branch_id: branch.body.data.branch_id as string,
    });
    expect([branchRes.status, branchRes.body.error.code]).toEqual([404, 'branch_not_found']);
    expect(fake.requests).toHaveLength(0);
    expect(await floorsOf(t, mine.session.id)).toHaveLength(1);
  });

  it('a branch reset beside a turn on the branch never deadlocks: the turn commits, the resets are 200 or 409', async () => {
    for (let run = 0; run < 8; run++) {
      const c = await oneTurn();
      fake.script({ reply: 'slow enough', delayMs: 30 });
      let done = false;
      const turn = post(`/sessions/${c.session.id}/respond`, { message: 'racing a reset' }).then((r) => {
        done = true;
        return r;
      });
      const resets: Array<{ status: number; code?: string }> = [];
      while (!done) {
        const res = await post(`/sessions/${c.session.id}/branches/main/reset`, { floor_id: c.floorId });
        resets.push({ status: res.status, code: res.body.error?.code });
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect((await turn).status).toBe(200);
      for (const r of resets) expect(r.status === 200 || (r.status === 409 && !!r.code)).toBe(true);
    }
  });

  it('a retry commits with its own floor.committed event', async () => {
    const c = await oneTurn();
    const res = await post(`/floors/${c.floorId}/retry`);
    expect(res.status).toBe(200);
    const events = (await projectEventRows(t, c.session.projectId)).filter(
      (e) => e.type === 'floor.committed' && e.floor_id === c.floorId,
    );
    expect(events).toHaveLength(2);
    expect(events[1].page_id).toBe(res.body.data.page_id);
  });
});

describe.each<Provider>(['anthropic', 'google'])('a non-streamed turn through %s', (provider) => {
  let fake: FakeModelServer;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, { provider });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('asks for a whole answer and commits it (JSON and SSE)', async () => {
    const session = await createSession(t);
    fake.script({ reply: 'Whole answer.', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const res = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'hi', generation_params: { stream: false } });
    expect(res.status).toBe(200);
    expect(fake.requests[0].stream).toBe(false);
    expect(res.body.data).toMatchObject({ generated_text: 'Whole answer.' });
    expect(res.body.data.total_usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3 });

    fake.script({ reply: 'Also whole.' });
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'again',
      generation_params: { stream: false },
    });
    await call.waitForEnd();
    expect(fake.requests[1].stream).toBe(false);
    expect(call.dataOf<{ chunk: string }>('chunk').map((c) => c.chunk)).toEqual(['Also whole.']);
    expect(call.types.at(-1)).toBe('done');
    const floors = await floorsOf(t, session.id);
    expect(floors.map((f) => f.pages.find((p) => p.page_kind === 'output')!.messages[0].content)).toEqual([
      'Whole answer.',
      'Also whole.',
    ]);
  });
});
