import { generationRunsRepository } from '@hearth/persistence';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  floorsOf,
  runRow,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  until,
  type FakeModelServer,
} from './turns-support';

/**
 * Regenerate, floor retry, step retry and edit-and-regenerate (issue 5 item 2): a new page version that
 * keeps the old one, the lock shared with respond, commit conflicts after a takeover, and their errors.
 */
describe('turns: regenerate, retry, retry-step, edit-and-regenerate', () => {
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

  // `.then` sends the request at once (a supertest request is lazy until awaited).
  const post = (path: string, body: Record<string, unknown> = {}, key = ADMIN_KEY) =>
    t.http
      .post(path)
      .set('x-api-key', key)
      .send(body)
      .then((r) => r);

  async function chat(turns: string[]) {
    const session = await createSession(t);
    const floors: Array<{ floor_id: string; page_id: string }> = [];
    for (const message of turns) {
      const res = await post(`/sessions/${session.id}/respond`, { message });
      expect(res.status).toBe(200);
      floors.push(res.body.data);
    }
    return { session, floors };
  }

  it('retry adds an output page version, keeps the old one and makes the new one active', async () => {
    const { session, floors } = await chat(['first', 'second']);
    fake.script({ reply: 'another take' });
    const res = await post(`/floors/${floors[0].floor_id}/retry`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      floor_id: floors[0].floor_id,
      floor_no: 0,
      generated_text: 'another take',
    });
    // The prompt of a retry ends at the floor's own input: later floors are not part of it.
    expect(fake.requests.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'first' });
    expect(fake.requests.at(-1)!.messages.map((m) => m.content)).not.toContain('second');

    const [floor] = await floorsOf(t, session.id);
    const outputs = floor.pages.filter((p) => p.page_kind === 'output');
    expect(outputs.map((p) => [p.version, p.is_active, p.messages[0].content])).toEqual([
      [1, false, 'ECHO: first'],
      [2, true, 'another take'],
    ]);
    expect(outputs[1].id).toBe(res.body.data.page_id);
    const db = t.resources.database.db;
    const log = await db
      .selectFrom('operation_logs')
      .selectAll()
      .where('run_id', '=', res.body.data.run_id)
      .executeTakeFirst();
    expect(log).toMatchObject({ action: 'retry_floor', status: 'succeeded' });
  });

  it('a retry body may repeat the floor of the path as floor_id; another floor is 400 with nothing written', async () => {
    const { session, floors } = await chat(['one', 'two']);
    const same = await post(`/floors/${floors[0].floor_id}/retry`, { floor_id: floors[0].floor_id });
    expect(same.status).toBe(200);
    expect(same.body.data.floor_id).toBe(floors[0].floor_id);
    const calls = fake.requests.length;
    const before = await floorsOf(t, session.id);
    for (const path of ['retry', 'retry-step']) {
      const other = await post(`/floors/${floors[0].floor_id}/${path}`, {
        floor_id: floors[1].floor_id,
        from_step_index: path === 'retry-step' ? 1 : undefined,
      });
      expect([other.status, other.body.error.code]).toEqual([400, 'validation_error']);
    }
    expect(fake.requests.length).toBe(calls);
    expect(await floorsOf(t, session.id)).toEqual(before);
  });

  it('regenerate retries the branch head; an empty branch has nothing to regenerate', async () => {
    const { session, floors } = await chat(['one', 'two']);
    fake.script({ reply: 'regenerated' });
    const res = await post(`/sessions/${session.id}/regenerate`, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      floor_id: floors[1].floor_id,
      floor_no: 1,
      generated_text: 'regenerated',
    });
    expect(fake.requests.at(-1)!.messages.slice(-3)).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'ECHO: one' },
      { role: 'user', content: 'two' },
    ]);

    const empty = await createSession(t);
    const none = await post(`/sessions/${empty.id}/regenerate`, {});
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe('floor_not_retryable');
    const foreign = await post(`/sessions/${session.id}/regenerate`, {}, stranger.apiKey);
    expect(foreign.status).toBe(404);
  });

  it('retry-step regenerates from step 1 and reports what was discarded; other steps do not exist', async () => {
    const { session, floors } = await chat(['step']);
    const calls = fake.requests.length;
    fake.script({ reply: 'stepped again' });
    const res = await post(`/floors/${floors[0].floor_id}/retry-step`, { from_step_index: 1 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      floor_id: floors[0].floor_id,
      generated_text: 'stepped again',
      discarded_from_step_index: 1,
      irreversible_side_effects: [],
    });
    // A new output page version from one new model call, the old one kept.
    expect(fake.requests.length).toBe(calls + 1);
    const [floor] = await floorsOf(t, session.id);
    expect(
      floor.pages.filter((p) => p.page_kind === 'output').map((p) => [p.version, p.is_active, p.id]),
    ).toEqual([
      [1, false, floors[0].page_id],
      [2, true, res.body.data.page_id],
    ]);
    const two = await post(`/floors/${floors[0].floor_id}/retry-step`, { from_step_index: 2 });
    expect(two.status).toBe(404);
    expect(two.body.error.code).toBe('retry_step_not_found');
    const zero = await post(`/floors/${floors[0].floor_id}/retry-step`, { from_step_index: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.error.code).toBe('validation_error');
  });

  it('edit-and-regenerate writes a new input page version and a new output from the edited text', async () => {
    const { session, floors } = await chat(['helo']);
    const [floor] = await floorsOf(t, session.id);
    const userMessage = floor.pages.find((p) => p.page_kind === 'input')!.messages[0];
    const assistantMessage = floor.pages.find((p) => p.page_kind === 'output')!.messages[0];

    const res = await post(`/messages/${userMessage.id}/edit-and-regenerate`, { content: 'hello' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ floor_id: floors[0].floor_id, generated_text: 'ECHO: hello' });
    const [after] = await floorsOf(t, session.id);
    const inputs = after.pages.filter((p) => p.page_kind === 'input');
    expect(inputs.map((p) => [p.version, p.is_active, p.messages[0].content])).toEqual([
      [1, false, 'helo'],
      [2, true, 'hello'],
    ]);
    expect(after.pages.filter((p) => p.page_kind === 'output' && p.is_active)[0].messages[0].content).toBe(
      'ECHO: hello',
    );

    const wrong = await post(`/messages/${assistantMessage.id}/edit-and-regenerate`, { content: 'x' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('invalid_message_scope');
    const missing = await post(`/messages/msg_missing/edit-and-regenerate`, { content: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('message_not_found');
    const foreign = await post(
      `/messages/${userMessage.id}/edit-and-regenerate`,
      { content: 'x' },
      stranger.apiKey,
    );
    expect(foreign.status).toBe(404);
    const blank = await post(`/messages/${userMessage.id}/edit-and-regenerate`, { content: ' ' });
    expect(blank.status).toBe(400);
    // Nothing written by the refused calls.
    expect((await floorsOf(t, session.id))[0].pages).toHaveLength(4);
  });

  it('a failed retry leaves the floor as it was', async () => {
    const { session, floors } = await chat(['keep']);
    fake.script({ status: 500 }, { status: 500 }, { status: 500 });
    const res = await post(`/floors/${floors[0].floor_id}/retry`, {
      generation_params: { timeout_ms: 5000 },
    });
    expect(res.status).toBe(502);
    const [floor] = await floorsOf(t, session.id);
    expect(floor.state).toBe('committed');
    expect(floor.pages.filter((p) => p.page_kind === 'output')).toHaveLength(1);
  });

  it('shares the branch lock with respond: 409 generation_conflict and floor_not_committed while generating', async () => {
    const { session, floors } = await chat(['base']);
    fake.script({ chunks: ['a', 'b', 'c'], chunkDelayMs: 300 });
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, { message: 'long' });
    await call.waitFor((c) => c.types.includes('start'), 5000, 'start');
    const generatingFloor = call.dataOf<{ floor_id: string }>('start')[0].floor_id;

    const retry = await post(`/floors/${floors[0].floor_id}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('generation_conflict');
    const retryGenerating = await post(`/floors/${generatingFloor}/retry`);
    expect(retryGenerating.status).toBe(409);
    expect(retryGenerating.body.error.code).toBe('floor_not_committed');
    const regenerate = await post(`/sessions/${session.id}/regenerate`);
    expect(regenerate.status).toBe(409);
    await call.waitForEnd();
    expect(call.types.at(-1)).toBe('done');

    // And a running retry blocks respond.
    fake.script({ hang: true });
    const seen = fake.requests.length;
    const pending = post(`/floors/${floors[0].floor_id}/retry`);
    await until(() => fake.requests.length > seen, 5000, 'the retry to reach the model');
    const blocked = await post(`/sessions/${session.id}/respond`, { message: 'blocked' });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.code).toBe('generation_conflict');
    const run = await generationRunsRepository.findRunningOfBranch(
      t.resources.database.db,
      call.dataOf<{ branch_id: string }>('start')[0].branch_id,
    );
    await post(`/runs/${run!.id}/cancel`);
    expect((await pending).status).toBe(499);
  });

  it('a run whose process died is taken over after its lease; its late commit gets commit_conflict / generation_target_stale', async () => {
    const db = t.resources.database.db;
    // Retry: the taken-over run's commit finds its run ended → commit_conflict.
    const { session, floors } = await chat(['lease']);
    fake.script({ chunks: ['slow'], delayMs: 3000 });
    const before = fake.requests.length;
    const slow = post(`/floors/${floors[0].floor_id}/retry`);
    await until(() => fake.requests.length > before, 5000, 'the retry to reach the model');
    const running = (await db
      .selectFrom('generation_runs')
      .selectAll()
      .where('session_id', '=', session.id)
      .where('status', '=', 'running')
      .executeTakeFirst())!;
    await generationRunsRepository.renewLeases(db, [running.id], 0);
    const takeover = await post(`/floors/${floors[0].floor_id}/retry`);
    expect(takeover.status).toBe(200);
    const late = await slow;
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('commit_conflict');
    expect(await runRow(t, running.id)).toMatchObject({
      status: 'failed',
      error: { code: 'generation_abandoned' },
    });
    const outputs = (await floorsOf(t, session.id))[0].pages.filter((p) => p.page_kind === 'output');
    expect(outputs).toHaveLength(2);

    // Respond: the branch head moved to the new turn's floor → generation_target_stale.
    fake.reset();
    fake.script({ chunks: ['slow'], delayMs: 3000 });
    const slowRespond = post(`/sessions/${session.id}/respond`, { message: 'old' });
    // The provider call may start before the run row commits: wait for both.
    const runningRun = () =>
      db
        .selectFrom('generation_runs')
        .selectAll()
        .where('session_id', '=', session.id)
        .where('status', '=', 'running')
        .executeTakeFirst();
    await until(
      async () => fake.requests.length > 0 && (await runningRun()) !== undefined,
      5000,
      'the respond to run',
    );
    const stuck = (await runningRun())!;
    // The "dead" process still renews its leases every 10 s; a renewal landing between the expiry and
    // the takeover makes the takeover meet a live lock (409): expire again and retry, as a real takeover
    // of a silent process would succeed on its first try.
    let fresh = null as Awaited<ReturnType<typeof post>> | null;
    for (let attempt = 0; attempt < 5; attempt++) {
      await generationRunsRepository.renewLeases(db, [stuck.id], 0);
      fresh = await post(`/sessions/${session.id}/respond`, { message: 'new' });
      if (fresh.status !== 409) break;
    }
    expect(fresh!.status).toBe(200);
    const stale = await slowRespond;
    expect(stale.status).toBe(409);
    expect(['generation_target_stale', 'commit_conflict']).toContain(stale.body.error.code);
    const all = await floorsOf(t, session.id);
    expect(all.map((f) => [f.floor_no, f.state])).toEqual([
      [0, 'committed'],
      [1, 'committed'],
    ]);
    expect(all[1].pages.find((p) => p.page_kind === 'input')!.messages[0].content).toBe('new');
  });

  it('404 floor_not_found for missing and foreign floors', async () => {
    const { floors } = await chat(['mine']);
    const missing = await post(`/floors/flr_missing/retry`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('floor_not_found');
    const foreign = await post(`/floors/${floors[0].floor_id}/retry`, {}, stranger.apiKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('floor_not_found');
  });
});
