import { sql } from 'kysely';
import pg from 'pg';
import { ResolveModelForTurnUseCase } from '@hearth/app';
import { LLM_CLIENT, type LlmClient } from '@hearth/platform';
import { createSession } from '../support/factories/sessions';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { floorsOf, startFakeModelServer, startTurnsApp, until, type FakeModelServer } from './turns-support';

/**
 * The service-side errors of the chat routes (spec 2 "Errors"; docs/decisions.md "Turns and runs"):
 * 503 `generation_queue_timeout` (every generation slot busy), 503 `commit_busy` (the commit waited
 * too long for a lock), 500 `turn_commit_failed`, 500 `orchestration_failed`, and 503
 * `feature_unavailable` for `session_state_writes`. Each leaves no floor of the failed turn and no
 * running run behind.
 */
describe('turns: queue, commit and orchestration errors', () => {
  let fake: FakeModelServer;
  let database: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    database = await createTestDatabase();
    t = await startTurnsApp(fake, {
      database,
      env: {
        GENERATION_CONCURRENCY: '1',
        GENERATION_QUEUE_TIMEOUT_MS: '300',
        TURN_COMMIT_LOCK_TIMEOUT_MS: '200',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
    await database.drop();
  });
  beforeEach(() => fake.reset());
  afterEach(() => jest.restoreAllMocks());

  const post = (path: string, body: Record<string, unknown> = {}) =>
    t.http
      .post(path)
      .set('x-api-key', ADMIN_KEY)
      .send(body)
      .then((r) => r);

  const db = () => t.resources.database.db;

  /** Floors and running runs of a session, to show a failed turn left nothing behind. */
  async function leftovers(sessionId: string) {
    const floors = await floorsOf(t, sessionId);
    const running = await db()
      .selectFrom('generation_runs')
      .select('id')
      .where('session_id', '=', sessionId)
      .where('status', '=', 'running')
      .execute();
    return {
      floors: floors.length,
      generating: floors.filter((f) => f.state !== 'committed').length,
      running: running.length,
    };
  }

  it('503 generation_queue_timeout when every slot stays busy longer than the queue timeout', async () => {
    const busy = await createSession(t);
    const waiting = await createSession(t);
    fake.script({ reply: 'slow answer', delayMs: 1_200 });
    const first = post(`/sessions/${busy.id}/respond`, { message: 'take the only slot' });
    await until(async () => (await leftovers(busy.id)).running === 1, 5_000, 'the first turn to run');

    const before = await leftovers(waiting.id);
    const started = Date.now();
    const queued = await post(`/sessions/${waiting.id}/respond`, { message: 'wait for a slot' });
    expect(queued.status).toBe(503);
    expect(queued.body.error.code).toBe('generation_queue_timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(await leftovers(waiting.id)).toEqual(before);
    // The stream route answers the same before any SSE header.
    const stream = await t.http
      .post(`/sessions/${waiting.id}/respond/stream`)
      .set('x-api-key', ADMIN_KEY)
      .set('accept', 'text/event-stream')
      .send({ message: 'wait again' });
    expect(stream.status).toBe(503);
    expect(stream.body.error.code).toBe('generation_queue_timeout');

    expect((await first).status).toBe(200);
    // The slot is free again.
    const after = await post(`/sessions/${waiting.id}/respond`, { message: 'now there is room' });
    expect(after.status).toBe(200);
  });

  it('a turn that fails early gives its slot back', async () => {
    const session = await createSession(t);
    // 404 after the slot was taken: the next turn must not wait for it.
    expect((await post('/sessions/ses_missing/respond', { message: 'x' })).status).toBe(404);
    expect((await post(`/sessions/${session.id}/respond`, { message: 'fine' })).status).toBe(200);
  });

  it('503 commit_busy when the commit cannot get the branch lock in time; nothing of the turn stays', async () => {
    const session = await createSession(t);
    const before = await leftovers(session.id);
    fake.script({ reply: 'an answer that cannot be saved', delayMs: 400 });
    const turn = post(`/sessions/${session.id}/respond`, { message: 'save me' });
    await until(async () => (await leftovers(session.id)).running === 1, 5_000, 'the turn to run');

    // Another writer holds the branch row for 1.2 s: longer than TURN_COMMIT_LOCK_TIMEOUT_MS.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM branches WHERE session_id = $1 FOR UPDATE', [session.id]);
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        void holder
          .query('COMMIT')
          .then(() => holder.end())
          .then(() => resolve());
      }, 1_200),
    );

    const res = await turn;
    await released;
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('commit_busy');
    expect(await leftovers(session.id)).toEqual(before);
    const runs = await db()
      .selectFrom('generation_runs')
      .selectAll()
      .where('session_id', '=', session.id)
      .execute();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', error: { code: 'commit_busy' } });
  });

  it('500 turn_commit_failed when the commit fails inside the database; the floor is removed', async () => {
    const session = await createSession(t);
    const before = await leftovers(session.id);
    // A trigger that refuses this session's prompt snapshot: the commit transaction fails as a whole.
    await sql
      .raw(
        `CREATE FUNCTION refuse_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.session_id = '${session.id}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
  RETURN NEW;
END
$$`,
      )
      .execute(db());
    await sql
      .raw(
        'CREATE TRIGGER refuse_snapshot BEFORE INSERT ON floor_prompt_snapshots FOR EACH ROW EXECUTE FUNCTION refuse_snapshot()',
      )
      .execute(db());
    try {
      const res = await post(`/sessions/${session.id}/respond`, { message: 'this will not save' });
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('turn_commit_failed');
      expect(await leftovers(session.id)).toEqual(before);
      const events = await db()
        .selectFrom('project_events')
        .select('type')
        .where('project_id', '=', session.projectId)
        .where('type', '=', 'floor.committed')
        .execute();
      expect(events).toHaveLength(0);
    } finally {
      await sql.raw('DROP TRIGGER refuse_snapshot ON floor_prompt_snapshots').execute(db());
      await sql.raw('DROP FUNCTION refuse_snapshot()').execute(db());
    }
  });

  it('500 orchestration_failed for an unexpected failure while preparing, before anything is written', async () => {
    const session = await createSession(t);
    const before = await leftovers(session.id);
    jest
      .spyOn(ResolveModelForTurnUseCase.prototype, 'execute')
      .mockRejectedValueOnce(new TypeError('an unexpected bug'));
    const res = await post(`/sessions/${session.id}/respond`, { message: 'x' });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('orchestration_failed');
    expect(await leftovers(session.id)).toEqual(before);
    expect(t.logs.some((line) => line.includes('turn orchestration failed'))).toBe(true);
    // Nothing is stuck: the next turn runs.
    expect((await post(`/sessions/${session.id}/respond`, { message: 'again' })).status).toBe(200);
  });

  it('500 orchestration_failed for an unexpected failure during the generation (JSON and SSE)', async () => {
    const session = await createSession(t);
    const before = await leftovers(session.id);
    const llm = t.app.get<LlmClient>(LLM_CLIENT);
    jest.spyOn(llm, 'generate').mockRejectedValueOnce(new RangeError('not a provider error'));
    const res = await post(`/sessions/${session.id}/respond`, { message: 'x' });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('orchestration_failed');
    expect(await leftovers(session.id)).toEqual(before);

    jest.spyOn(llm, 'generate').mockRejectedValueOnce(new RangeError('not a provider error'));
    const stream = await t.http
      .post(`/sessions/${session.id}/respond/stream`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'y' });
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('event: error');
    expect(stream.text).toContain('"code":"orchestration_failed"');
    expect(await leftovers(session.id)).toEqual(before);
    const runs = await db()
      .selectFrom('generation_runs')
      .selectAll()
      .where('session_id', '=', session.id)
      .execute();
    expect(runs.map((r) => [r.status, r.error?.code])).toEqual([
      ['failed', 'orchestration_failed'],
      ['failed', 'orchestration_failed'],
    ]);
  });

  it('session_state_writes: 503 feature_unavailable (client data is not enabled), 400 for malformed items', async () => {
    const session = await createSession(t);
    const before = await leftovers(session.id);
    const write = (items: unknown) =>
      post(`/sessions/${session.id}/respond`, { message: 'x', session_state_writes: items });

    const unavailable = await write([{ namespace: 'inventory', slot: 'gold', value: 10 }]);
    expect(unavailable.status).toBe(503);
    expect(unavailable.body.error.code).toBe('feature_unavailable');
    expect((await write([{ namespace: 'inventory', slot: 'gold', delete: true }])).body.error.code).toBe(
      'feature_unavailable',
    );

    for (const bad of [
      [{ namespace: 'inventory', slot: 'gold' }],
      [{ namespace: 'inventory', slot: 'gold', value: 1, delete: true }],
      [{ namespace: 'inventory', slot: 'gold', delete: false }],
      [{ namespace: 'inventory', slot: 'gold', value: 1, branch_id: 'main' }],
      [{ namespace: 'inventory', slot: 'gold', value: 1, write_mode: 'replace' }],
      [{ namespace: '', slot: 'gold', value: 1 }],
      'not a list',
    ]) {
      const res = await write(bad);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    // Limits: at most 100 items, namespace 1-128 and slot 1-256 characters (at the edge: 503, past it: 400).
    const item = (namespace: string, slot: string) => ({ namespace, slot, value: 1 });
    const atEdge = await write(Array.from({ length: 100 }, (_, i) => item('n'.repeat(128), `s${i}`)));
    expect(atEdge.body.error.code).toBe('feature_unavailable');
    expect((await write([item('n', 's'.repeat(256))])).body.error.code).toBe('feature_unavailable');
    for (const past of [
      Array.from({ length: 101 }, (_, i) => item('n', `s${i}`)),
      [item('n'.repeat(129), 's')],
      [item('n', 's'.repeat(257))],
    ]) {
      const res = await write(past);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    // Another account's session stays 404 first.
    expect(
      (
        await post('/sessions/ses_not_yours/respond', {
          message: 'x',
          session_state_writes: [{ namespace: 'n', slot: 's', value: 1 }],
        })
      ).status,
    ).toBe(404);
    expect(await leftovers(session.id)).toEqual(before);
    // An empty list is no write at all.
    expect((await write([])).status).toBe(200);
  });
});
