import { sql } from 'kysely';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import {
  floorsOf,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  until,
  type FakeModelServer,
} from './turns-support';

/**
 * Session state writes of a turn (spec 2 `session_state_writes`; docs/decisions.md "Client data and
 * session state"): they land on the turn's floor when it commits, the state a floor sees follows its
 * lineage (branches, retries), every `session_state_*` code is provoked, limits at and past the limit,
 * and a failed turn writes nothing.
 */
/** Client data is off unless `ENABLE_CLIENT_DATA` turns it on. */
const ON = { ENABLE_CLIENT_DATA: 'true' };

describe('session state writes', () => {
  let fake: FakeModelServer;
  let database: TestDatabase;
  let t: TestApp;
  let stranger: Caller;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    database = await createTestDatabase();
    t = await startTurnsApp(fake, { database, env: ON });
    stranger = await createAccountCaller(t, { name: 'Stranger' });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
    await database.drop();
  });
  beforeEach(() => fake.reset());

  const db = () => t.resources.database.db;
  const post = (path: string, body: Record<string, unknown> = {}, key = ADMIN_KEY, app = t) =>
    app.http
      .post(path)
      .set('x-api-key', key)
      .send(body)
      .then((r) => r);
  const get = (path: string, key = ADMIN_KEY, app = t) =>
    app.http
      .get(path)
      .set('x-api-key', key)
      .then((r) => r);

  let namespaceNo = 0;
  /** Registers a namespace with a fresh name (prefix kept readable). */
  async function register(options: Record<string, unknown> = {}, key = ADMIN_KEY, app = t): Promise<string> {
    const name = `ns${++namespaceNo}`;
    const res = await post('/client-data/namespaces', { name, ...options }, key, app);
    expect(res.status).toBe(201);
    return name;
  }

  const respond = (sessionId: string, writes: unknown, extra: Record<string, unknown> = {}, app = t) =>
    post(
      `/sessions/${sessionId}/respond`,
      { message: 'hello', session_state_writes: writes, ...extra },
      ADMIN_KEY,
      app,
    );

  async function stateOf(sessionId: string, query = '', app = t) {
    const res = await get(`/sessions/${sessionId}/state${query}`, ADMIN_KEY, app);
    expect(res.status).toBe(200);
    return res.body.data as {
      floor_id: string | null;
      items: Array<{
        namespace: string;
        slot: string;
        value: unknown;
        mutation_id: string;
        floor_id: string;
      }>;
    };
  }
  const slots = async (sessionId: string, query = '') =>
    Object.fromEntries(
      (await stateOf(sessionId, query)).items.map((i) => [`${i.namespace}/${i.slot}`, i.value]),
    );

  const storedWrites = (sessionId: string) =>
    db().selectFrom('session_state_mutations').selectAll().where('session_id', '=', sessionId).execute();

  it('lands the writes on the turn floor when it commits; later turns see them, deletes remove them', async () => {
    const ns = await register();
    const session = await createSession(t);
    const first = await respond(session.id, [
      { namespace: ns, slot: 'gold', value: 10 },
      { namespace: ns, slot: 'bag', value: { items: ['rope', 'lamp'], open: true } },
      { namespace: ns, slot: 'nothing', value: null },
    ]);
    expect(first.status).toBe(200);
    expect(first.body.data.session_state_mutations).toEqual([
      { id: expect.stringMatching(/^ssm_/), namespace: ns, slot: 'gold', present: true },
      { id: expect.stringMatching(/^ssm_/), namespace: ns, slot: 'bag', present: true },
      { id: expect.stringMatching(/^ssm_/), namespace: ns, slot: 'nothing', present: true },
    ]);
    expect(await slots(session.id)).toEqual({
      [`${ns}/bag`]: { items: ['rope', 'lamp'], open: true },
      [`${ns}/gold`]: 10,
      [`${ns}/nothing`]: null,
    });
    const state = await stateOf(session.id);
    expect(state.floor_id).toBe(first.body.data.floor_id);
    expect(state.items.every((i) => i.floor_id === first.body.data.floor_id)).toBe(true);

    // The same slot twice in one request: the later write wins.
    const second = await respond(session.id, [
      { namespace: ns, slot: 'gold', value: 11 },
      { namespace: ns, slot: 'gold', value: 12 },
      { namespace: ns, slot: 'bag', delete: true },
    ]);
    expect(second.status).toBe(200);
    expect(second.body.data.session_state_mutations.map((m: { present: boolean }) => m.present)).toEqual([
      true,
      true,
      false,
    ]);
    expect(await slots(session.id)).toEqual({ [`${ns}/gold`]: 12, [`${ns}/nothing`]: null });
    // A turn without writes changes nothing and has no session_state_mutations in its result.
    const third = await respond(session.id, undefined);
    expect(third.status).toBe(200);
    expect(third.body.data).not.toHaveProperty('session_state_mutations');
    expect(await slots(session.id)).toEqual({ [`${ns}/gold`]: 12, [`${ns}/nothing`]: null });
    // The state as an earlier floor saw it.
    expect(await slots(session.id, `?floor_id=${first.body.data.floor_id}`)).toEqual({
      [`${ns}/bag`]: { items: ['rope', 'lamp'], open: true },
      [`${ns}/gold`]: 10,
      [`${ns}/nothing`]: null,
    });
    // The floor's writes and the committed log's count.
    const writes = await get(`/floors/${second.body.data.floor_id}/session-state-writes`);
    expect(writes.status).toBe(200);
    expect(
      writes.body.data.map((w: { slot: string; present: boolean; value: unknown }) => [
        w.slot,
        w.present,
        w.value,
      ]),
    ).toEqual([
      ['gold', true, 11],
      ['gold', true, 12],
      ['bag', false, null],
    ]);
    const log = await db()
      .selectFrom('operation_logs')
      .select('metadata')
      .where('run_id', '=', second.body.data.run_id)
      .executeTakeFirstOrThrow();
    expect(log.metadata).toMatchObject({ session_state_write_count: 3 });
  });

  it('streams the same way: the done event carries the landed writes', async () => {
    const ns = await register();
    const session = await createSession(t);
    const call = await SseCall.open(
      t,
      'POST',
      `/sessions/${session.id}/respond/stream`,
      {
        message: 'hi',
        session_state_writes: [{ namespace: ns, slot: 'mood', value: 'calm' }],
      },
      { 'x-api-key': ADMIN_KEY },
    );
    await call.waitForEnd();
    const [done] = call.dataOf<{ session_state_mutations: unknown }>('done');
    expect(done.session_state_mutations).toEqual([
      { id: expect.stringMatching(/^ssm_/), namespace: ns, slot: 'mood', present: true },
    ]);
    expect(await slots(session.id)).toEqual({ [`${ns}/mood`]: 'calm' });
  });

  it('follows the lineage: a branch from an earlier floor does not see later writes', async () => {
    const ns = await register();
    const session = await createSession(t);
    const f0 = await respond(session.id, [{ namespace: ns, slot: 'chapter', value: 1 }]);
    const f1 = await respond(session.id, [{ namespace: ns, slot: 'chapter', value: 2 }]);
    expect(f1.status).toBe(200);
    const branch = await post(`/floors/${f0.body.data.floor_id}/branch`, { name: 'alt' });
    expect(branch.status).toBe(201);
    const branchId = branch.body.data.branch_id;
    expect(await slots(session.id, `?branch_id=${branchId}`)).toEqual({ [`${ns}/chapter`]: 1 });
    const alt = await respond(session.id, [{ namespace: ns, slot: 'route', value: 'forest' }], {
      branch_id: branchId,
    });
    expect(alt.status).toBe(200);
    expect(await slots(session.id, `?branch_id=${branchId}`)).toEqual({
      [`${ns}/chapter`]: 1,
      [`${ns}/route`]: 'forest',
    });
    expect(await slots(session.id)).toEqual({ [`${ns}/chapter`]: 2 });
  });

  it('a failed turn lands nothing', async () => {
    const ns = await register();
    const session = await createSession(t);
    fake.script({ status: 500, errorBody: { error: { message: 'boom' } } });
    const res = await respond(session.id, [{ namespace: ns, slot: 's', value: 1 }]);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await storedWrites(session.id)).toEqual([]);
    expect(await floorsOf(t, session.id)).toEqual([]);
  });

  it('404 session_state_namespace_not_registered: unknown, another account’s, and deleted during the turn', async () => {
    const session = await createSession(t);
    const missing = await respond(session.id, [{ namespace: 'never_registered', slot: 's', value: 1 }]);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      code: 'session_state_namespace_not_registered',
      details: { namespace: 'never_registered' },
    });
    // Namespaces are the session account's: another account's registration does not count.
    const theirs = await register({}, stranger.apiKey);
    const res = await respond(session.id, [{ namespace: theirs, slot: 's', value: 1 }]);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('session_state_namespace_not_registered');

    // Deleted while the model is generating: the commit refuses the turn and nothing is written.
    const ns = await register();
    fake.script({ reply: 'slow reply', delayMs: 600 });
    const pending = respond(session.id, [{ namespace: ns, slot: 's', value: 1 }]);
    await until(() => fake.requests.length > 0, 5_000, 'the model call');
    const deleted = await t.http.delete(`/client-data/namespaces/${ns}`).set('x-api-key', ADMIN_KEY);
    expect(deleted.status).toBe(200);
    const late = await pending;
    expect(late.status).toBe(404);
    expect(late.body.error.code).toBe('session_state_namespace_not_registered');
    expect(await storedWrites(session.id)).toEqual([]);
    expect(await floorsOf(t, session.id)).toEqual([]);

    // Deleted and registered again under the same name (other settings): still not the one checked.
    expect((await post('/client-data/namespaces', { name: ns })).status).toBe(201);
    fake.script({ reply: 'slow reply', delayMs: 600 });
    const again = respond(session.id, [{ namespace: ns, slot: 's', value: 1 }]);
    await until(() => fake.requests.length > 1, 5_000, 'the second model call');
    expect((await t.http.delete(`/client-data/namespaces/${ns}`).set('x-api-key', ADMIN_KEY)).status).toBe(
      200,
    );
    expect((await post('/client-data/namespaces', { name: ns, max_items: 1 })).status).toBe(201);
    const reRegistered = await again;
    expect(reRegistered.status).toBe(404);
    expect(reRegistered.body.error.code).toBe('session_state_namespace_not_registered');
    expect(await storedWrites(session.id)).toEqual([]);
  });

  it('409 session_state_public_write_forbidden for game_state', async () => {
    const session = await createSession(t);
    const res = await respond(session.id, [{ namespace: 'game_state', slot: 'hp', value: 3 }]);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'session_state_public_write_forbidden',
      details: { namespace: 'game_state', index: 0 },
    });
    expect(await floorsOf(t, session.id)).toEqual([]);
  });

  it('409 session_state_payload_too_large: 256 KiB of values together pass, one byte more does not', async () => {
    const ns = await register({ max_bytes: 16 * 1024 * 1024 });
    const session = await createSession(t);
    // A string value's JSON is its text plus two quotes.
    const limit = 256 * 1024;
    const half = 'a'.repeat(limit / 2 - 2);
    const atLimit = await respond(session.id, [
      { namespace: ns, slot: 'a', value: half },
      { namespace: ns, slot: 'b', value: half },
    ]);
    expect(atLimit.status).toBe(200);
    const past = await respond(session.id, [
      { namespace: ns, slot: 'a', value: half },
      { namespace: ns, slot: 'b', value: `${half}a` },
    ]);
    expect(past.status).toBe(409);
    expect(past.body.error).toMatchObject({
      code: 'session_state_payload_too_large',
      details: { bytes: limit + 1, max_bytes: limit },
    });
  });

  it('400 for values Postgres cannot store or nested past 128 levels, and for governance fields', async () => {
    const ns = await register();
    const session = await createSession(t);
    const nest = (levels: number) => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    expect((await respond(session.id, [{ namespace: ns, slot: 'deep', value: nest(128) }])).status).toBe(200);
    for (const bad of [
      { namespace: ns, slot: 'deep', value: nest(129) },
      { namespace: ns, slot: 'nul', value: { text: 'a\u0000b' } },
      { namespace: ns, slot: 'surrogate', value: ['\ud800'] },
      { namespace: ns, slot: 'a\u0000', value: 1 },
      { namespace: ns, slot: 's', value: 1, replay_safety: 'safe' },
      { namespace: ns, slot: 's', value: 1, source_floor_id: 'flr_x' },
      { namespace: ns, slot: 's', delete: null },
      { namespace: ns, slot: 's', value: 1, delete: null },
    ]) {
      const res = await respond(session.id, [bad]);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    expect((await floorsOf(t, session.id)).length).toBe(1);
  });

  it('409 namespace item and byte limits, at the limit and one past it, on the state the floor sees', async () => {
    const items = await register({ max_items: 2 });
    const session = await createSession(t);
    expect((await respond(session.id, [{ namespace: items, slot: 'a', value: 1 }])).status).toBe(200);
    expect((await respond(session.id, [{ namespace: items, slot: 'b', value: 1 }])).status).toBe(200);
    // Rewriting a held slot adds no item.
    expect((await respond(session.id, [{ namespace: items, slot: 'a', value: 2 }])).status).toBe(200);
    const third = await respond(session.id, [{ namespace: items, slot: 'c', value: 1 }]);
    expect(third.status).toBe(409);
    expect(third.body.error).toMatchObject({
      code: 'session_state_namespace_item_limit_exceeded',
      details: { namespace: items, items: 3, max_items: 2 },
    });
    // Deleting one frees room in the same request.
    expect(
      (
        await respond(session.id, [
          { namespace: items, slot: 'a', delete: true },
          { namespace: items, slot: 'c', value: 1 },
        ])
      ).status,
    ).toBe(200);

    const bytes = await register({ max_bytes: 10 });
    // "12345678" is 10 bytes of JSON.
    expect((await respond(session.id, [{ namespace: bytes, slot: 'x', value: '12345678' }])).status).toBe(
      200,
    );
    const over = await respond(session.id, [{ namespace: bytes, slot: 'y', value: 1 }]);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'session_state_namespace_byte_limit_exceeded',
      details: { namespace: bytes, bytes: 11, max_bytes: 10 },
    });
    // A lowered limit never blocks a write that makes the state smaller.
    const patched = await t.http
      .patch(`/client-data/namespaces/${bytes}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ max_bytes: 5 });
    expect(patched.status).toBe(200);
    expect((await respond(session.id, [{ namespace: bytes, slot: 'x', value: '1234' }])).status).toBe(200);
    // Another session has its own state.
    const other = await createSession(t);
    expect((await respond(other.id, [{ namespace: items, slot: 'z', value: 1 }])).status).toBe(200);
  });

  it('409 account item and byte limits on the stored writes; deleting a session frees them', async () => {
    const limited = await startTurnsApp(fake, {
      env: { ...ON, CLIENT_DATA_ACCOUNT_MAX_ITEMS: '3', CLIENT_DATA_ACCOUNT_MAX_BYTES: '20' },
    });
    try {
      const ns = await register({}, ADMIN_KEY, limited);
      const session = await createSession(limited);
      expect(
        (
          await respond(
            session.id,
            [
              { namespace: ns, slot: 'a', value: 1 },
              { namespace: ns, slot: 'b', value: 2 },
            ],
            {},
            limited,
          )
        ).status,
      ).toBe(200);
      // Every value stays stored (older floors keep what they saw); a delete stores none.
      expect(
        (await respond(session.id, [{ namespace: ns, slot: 'a', delete: true }], {}, limited)).status,
      ).toBe(200);
      expect((await get('/client-data/usage', ADMIN_KEY, limited)).body.data).toMatchObject({
        items: 2,
        bytes: 2,
      });
      expect((await respond(session.id, [{ namespace: ns, slot: 'c', value: 3 }], {}, limited)).status).toBe(
        200,
      );
      const items = await respond(session.id, [{ namespace: ns, slot: 'd', value: 4 }], {}, limited);
      expect(items.status).toBe(409);
      expect(items.body.error).toMatchObject({
        code: 'session_state_account_item_limit_exceeded',
        details: { items: 4, max_items: 3 },
      });
      // At the limit, deletes are still taken: nothing stops a chat from clearing its state.
      expect(
        (await respond(session.id, [{ namespace: ns, slot: 'b', delete: true }], {}, limited)).status,
      ).toBe(200);
      const usage = await get('/client-data/usage', ADMIN_KEY, limited);
      expect(usage.body.data).toMatchObject({ items: 3, bytes: 3 });

      const deleted = await limited.http.delete(`/sessions/${session.id}`).set('x-api-key', ADMIN_KEY);
      expect(deleted.status).toBeLessThan(300);
      expect((await get('/client-data/usage', ADMIN_KEY, limited)).body.data).toMatchObject({
        items: 0,
        bytes: 0,
      });

      const fresh = await createSession(limited);
      // 20 bytes: "123456789012345678" is exactly 20.
      expect(
        (await respond(fresh.id, [{ namespace: ns, slot: 'a', value: '123456789012345678' }], {}, limited))
          .status,
      ).toBe(200);
      const bytes = await respond(fresh.id, [{ namespace: ns, slot: 'b', value: 1 }], {}, limited);
      expect(bytes.status).toBe(409);
      expect(bytes.body.error).toMatchObject({
        code: 'session_state_account_byte_limit_exceeded',
        details: { bytes: 21, max_bytes: 20 },
      });
    } finally {
      await limited.close();
    }
  });

  it('the account limit is checked again at commit: of two turns that each fit, the later one is refused', async () => {
    const limited = await startTurnsApp(fake, { env: { ...ON, CLIENT_DATA_ACCOUNT_MAX_ITEMS: '1' } });
    try {
      const ns = await register({}, ADMIN_KEY, limited);
      const [a, b] = [await createSession(limited), await createSession(limited)];
      fake.script({ reply: 'slow', delayMs: 400 }, { reply: 'slower', delayMs: 800 });
      const results = await Promise.all([
        respond(a.id, [{ namespace: ns, slot: 's', value: 1 }], {}, limited),
        respond(b.id, [{ namespace: ns, slot: 's', value: 1 }], {}, limited),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const refused = results.find((r) => r.status === 409)!;
      expect(refused.body.error.code).toBe('session_state_account_item_limit_exceeded');
      const floors = [...(await floorsOf(limited, a.id)), ...(await floorsOf(limited, b.id))];
      expect(floors).toHaveLength(1);
    } finally {
      await limited.close();
    }
  });

  it('500 session_state_stage_failed when landing fails inside the database; nothing is written', async () => {
    const ns = await register();
    const session = await createSession(t);
    await sql
      .raw(
        `CREATE FUNCTION refuse_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.session_id = '${session.id}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
  RETURN NEW;
END
$$`,
      )
      .execute(db());
    await sql
      .raw(
        'CREATE TRIGGER refuse_state BEFORE INSERT ON session_state_mutations FOR EACH ROW EXECUTE FUNCTION refuse_state()',
      )
      .execute(db());
    try {
      const res = await respond(session.id, [{ namespace: ns, slot: 's', value: 1 }]);
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('session_state_stage_failed');
      expect(await floorsOf(t, session.id)).toEqual([]);
      expect(await storedWrites(session.id)).toEqual([]);
    } finally {
      await sql.raw('DROP TRIGGER refuse_state ON session_state_mutations').execute(db());
      await sql.raw('DROP FUNCTION refuse_state()').execute(db());
    }
  });

  describe('retries keep the floor’s writes, as the namespace’s replay policy allows', () => {
    it('replay: a retry keeps the writes without asking', async () => {
      const ns = await register({ replay_policy: 'replay' });
      const session = await createSession(t);
      const turn = await respond(session.id, [{ namespace: ns, slot: 'gold', value: 5 }]);
      const retry = await post(`/floors/${turn.body.data.floor_id}/retry`);
      expect(retry.status).toBe(200);
      expect(await slots(session.id)).toEqual({ [`${ns}/gold`]: 5 });
    });

    it('confirm: 409 session_state_replay_confirmation_required until the ids are confirmed', async () => {
      const ns = await register({ replay_policy: 'confirm' });
      const plain = await register();
      const session = await createSession(t);
      const turn = await respond(session.id, [
        { namespace: ns, slot: 'gold', value: 5 },
        { namespace: plain, slot: 'note', value: 'x' },
      ]);
      const [confirmId] = turn.body.data.session_state_mutations.map((m: { id: string }) => m.id);
      const floorId = turn.body.data.floor_id;
      for (const [path, body] of [
        [`/floors/${floorId}/retry`, {}],
        [`/floors/${floorId}/retry-step`, { from_step_index: 1 }],
        [`/sessions/${session.id}/regenerate`, {}],
      ] as const) {
        const res = await post(path, body);
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({
          code: 'session_state_replay_confirmation_required',
          details: { floor_id: floorId, mutation_ids: [confirmId], namespaces: [ns] },
        });
      }
      const userMessage = (await floorsOf(t, session.id))[0].pages.find((p) => p.page_kind === 'input')!
        .messages[0];
      const edit = await post(`/messages/${userMessage.id}/edit-and-regenerate`, { content: 'edited' });
      expect(edit.body.error.code).toBe('session_state_replay_confirmation_required');
      expect(fake.requests).toHaveLength(1);

      const confirmed = await post(`/floors/${floorId}/retry`, {
        confirmed_session_state_mutation_ids: [confirmId],
      });
      expect(confirmed.status).toBe(200);
      expect(await slots(session.id)).toEqual({ [`${ns}/gold`]: 5, [`${plain}/note`]: 'x' });
      const editConfirmed = await post(`/messages/${userMessage.id}/edit-and-regenerate`, {
        content: 'edited',
        confirmed_session_state_mutation_ids: [confirmId],
      });
      expect(editConfirmed.status).toBe(200);
    });

    it('a policy changed to block while the retry generates refuses it at commit', async () => {
      const ns = await register({ replay_policy: 'replay' });
      const session = await createSession(t);
      const turn = await respond(session.id, [{ namespace: ns, slot: 'gold', value: 5 }]);
      fake.script({ reply: 'late take', delayMs: 600 });
      const pending = post(`/floors/${turn.body.data.floor_id}/retry`);
      await until(() => fake.requests.length > 1, 5_000, 'the retry’s model call');
      const patched = await t.http
        .patch(`/client-data/namespaces/${ns}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ replay_policy: 'block' });
      expect(patched.status).toBe(200);
      const retry = await pending;
      expect(retry.status).toBe(409);
      expect(retry.body.error.code).toBe('session_state_replay_blocked');
      const [floor] = await floorsOf(t, session.id);
      expect(floor.pages.filter((p) => p.page_kind === 'output')).toHaveLength(1);
    });

    it('block: 409 session_state_replay_blocked, confirmed or not', async () => {
      const ns = await register({ replay_policy: 'block' });
      const session = await createSession(t);
      const turn = await respond(session.id, [{ namespace: ns, slot: 'paid', value: true }]);
      const id = turn.body.data.session_state_mutations[0].id;
      for (const body of [{}, { confirmed_session_state_mutation_ids: [id] }]) {
        const res = await post(`/floors/${turn.body.data.floor_id}/retry`, body);
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({
          code: 'session_state_replay_blocked',
          details: { mutation_ids: [id], namespaces: [ns] },
        });
      }
      // A later floor without writes retries freely.
      const next = await respond(session.id, undefined);
      expect((await post(`/floors/${next.body.data.floor_id}/retry`)).status).toBe(200);
    });
  });

  it('another account cannot read a session’s state or a floor’s writes (404)', async () => {
    const ns = await register();
    const session = await createSession(t);
    const turn = await respond(session.id, [{ namespace: ns, slot: 's', value: 'secret' }]);
    const state = await get(`/sessions/${session.id}/state`, stranger.apiKey);
    expect(state.status).toBe(404);
    expect(JSON.stringify(state.body)).not.toContain('secret');
    const writes = await get(`/floors/${turn.body.data.floor_id}/session-state-writes`, stranger.apiKey);
    expect(writes.status).toBe(404);
    expect(JSON.stringify(writes.body)).not.toContain('secret');
  });

  it('deleting a namespace removes its state everywhere', async () => {
    const ns = await register();
    const keep = await register();
    const session = await createSession(t);
    await respond(session.id, [
      { namespace: ns, slot: 'a', value: 1 },
      { namespace: keep, slot: 'b', value: 2 },
    ]);
    expect((await t.http.delete(`/client-data/namespaces/${ns}`).set('x-api-key', ADMIN_KEY)).status).toBe(
      200,
    );
    expect(await slots(session.id)).toEqual({ [`${keep}/b`]: 2 });
  });

  it('works the same on the embedded database (npm start without DATABASE_URL)', async () => {
    const embedded = await startTurnsApp(fake, { embedded: true, env: ON });
    try {
      const ns = await register({}, ADMIN_KEY, embedded);
      const session = await createSession(embedded);
      const turn = await respond(session.id, [{ namespace: ns, slot: 'gold', value: 7 }], {}, embedded);
      expect(turn.status).toBe(200);
      expect((await stateOf(session.id, '', embedded)).items).toEqual([
        expect.objectContaining({ namespace: ns, slot: 'gold', value: 7, floor_id: turn.body.data.floor_id }),
      ]);
      expect((await get('/client-data/usage', ADMIN_KEY, embedded)).body.data).toMatchObject({
        items: 1,
        bytes: 1,
      });
      await embedded.http.delete(`/sessions/${session.id}`).set('x-api-key', ADMIN_KEY);
      expect((await get('/client-data/usage', ADMIN_KEY, embedded)).body.data).toMatchObject({
        items: 0,
        bytes: 0,
      });
    } finally {
      await embedded.close();
    }
  });

  it('503 feature_unavailable when client data is not enabled (the default)', async () => {
    // Off by default (ENABLE_CLIENT_DATA).
    const disabled = await startTurnsApp(fake);
    try {
      const session = await createSession(disabled);
      const res = await respond(
        session.id,
        [{ namespace: 'inventory', slot: 'gold', value: 1 }],
        {},
        disabled,
      );
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('feature_unavailable');
      // An empty list is no write, so the turn runs.
      expect((await respond(session.id, [], {}, disabled)).status).toBe(200);
    } finally {
      await disabled.close();
    }
  });
});
