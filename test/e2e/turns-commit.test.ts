import { sql } from 'kysely';
import { importRegexProfile, regexScript } from '../support/factories/presets';
import { createSession } from '../support/factories/sessions';
import { createUserCard } from '../support/factories/user-cards';
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
 * The commit of a respond turn (docs/decisions.md "Turn latency"): a respond whose run is not detached
 * and whose macros wrote no local variable commits in one statement; its gate (the branch head still
 * on the floor, the run still running, the floor still generating) failing falls back to the
 * step-by-step transaction, which names the error and writes nothing. Both ways write the same rows.
 */
describe('turns: the commit of a respond', () => {
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

  const db = () => t.resources.database.db;

  /** What a committed turn wrote besides its floor: log, event, prompt and variable snapshots, run. */
  async function writtenFor(runId: string, floorId: string) {
    const [log, event, prompt, variables, run] = await Promise.all([
      db().selectFrom('operation_logs').selectAll().where('run_id', '=', runId).execute(),
      db()
        .selectFrom('project_events')
        .selectAll()
        .where('floor_id', '=', floorId)
        .where('type', '=', 'floor.committed')
        .execute(),
      db().selectFrom('floor_prompt_snapshots').selectAll().where('floor_id', '=', floorId).execute(),
      db().selectFrom('floor_variable_snapshots').selectAll().where('floor_id', '=', floorId).execute(),
      runRow(t, runId),
    ]);
    return { log, event, prompt, variables, run };
  }

  /** A stream held by the fake model until `release`; resolves once the turn is generating. */
  async function generating(sessionId: string, body: Record<string, unknown> = {}) {
    fake.script({ chunks: ['one ', 'two ', 'three'], chunkDelayMs: 300 });
    const call = await SseCall.open(t, 'POST', `/sessions/${sessionId}/respond/stream`, {
      message: 'Go on',
      ...body,
    });
    await until(() => call.types.includes('chunk'), 5_000);
    const start = call.dataOf<{ floor_id: string; run_id: string; branch_id: string }>('start')[0];
    return { call, start };
  }

  it('commits a turn whose message and reply hold special-token text (<|endoftext|>), counted as text', async () => {
    const session = await createSession(t);
    fake.script({ reply: 'A reply with <|endoftext|> inside.' });
    const res = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'Say <|endoftext|><|im_start|> please' });
    expect(res.status).toBe(200);
    const [floor] = await floorsOf(t, session.id);
    expect(floor.state).toBe('committed');
    const messages = await db()
      .selectFrom('messages')
      .innerJoin('pages', 'pages.id', 'messages.page_id')
      .select(['messages.content', 'messages.token_count'])
      .where('pages.floor_id', '=', floor.id)
      .execute();
    expect(messages.map((m) => m.content).sort()).toEqual([
      'A reply with <|endoftext|> inside.',
      'Say <|endoftext|><|im_start|> please',
    ]);
    // As text: several tokens each, not one special token.
    for (const m of messages) expect(m.token_count).toBeGreaterThan(8);
  });

  it("stores the reply after its AI-output regex scripts, with their macros expanded as ST's runRegexScript does", async () => {
    const persona = await createUserCard(t, ADMIN_KEY, { name: 'A.J.', description: '' });
    const profile = await importRegexProfile(t, ADMIN_KEY, {
      data: [
        // substituteRegex 2: the persona's name is matched literally (not `A` any `J` any).
        regexScript({
          scriptName: 'greeting',
          findRegex: '/Hello {{user}}/g',
          substituteRegex: 2,
          replaceString: 'Hi {{user}}, {{char}} here ({{match}})',
        }),
      ],
    });
    const session = await createSession(t, {
      body: { regex_profile_id: profile.id, user_card_id: persona.id },
    });
    fake.script({ reply: 'Hello A.J. and Hello AxJx!' });
    const res = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'Hi' });
    expect(res.status).toBe(200);
    const [floor] = await floorsOf(t, session.id);
    const stored = await db()
      .selectFrom('messages')
      .innerJoin('pages', 'pages.id', 'messages.page_id')
      .select('messages.content')
      .where('pages.floor_id', '=', floor.id)
      .where('pages.page_kind', '=', 'output')
      .executeTakeFirstOrThrow();
    expect(stored.content).toBe('Hi A.J., Assistant here (Hello A.J.) and Hello AxJx!');
  });

  it('writes the same rows in one statement as the transaction does (a detached run takes the transaction)', async () => {
    const session = await createSession(t);
    fake.script({ reply: 'First reply.' }, { reply: 'Second reply.' });
    const first = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'One' });
    expect(first.status).toBe(200);
    const second = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'Two',
      detach: true,
    });
    await second.waitForEnd();
    const done = second.dataOf<{ floor_id: string; run_id: string; page_id: string }>('done')[0];
    expect(done).toBeDefined();

    const floors = await floorsOf(t, session.id);
    expect(floors.map((f) => f.state)).toEqual(['committed', 'committed']);
    const shapes = [];
    for (const [floor, runId] of [
      [floors[0], first.body.data.run_id as string],
      [floors[1], done.run_id],
    ] as const) {
      const written = await writtenFor(runId, floor.id);
      expect(written.log).toHaveLength(1);
      expect(written.event).toHaveLength(1);
      expect(written.prompt).toHaveLength(1);
      expect(written.variables).toHaveLength(1);
      const row = await db()
        .selectFrom('floors')
        .selectAll()
        .where('id', '=', floor.id)
        .executeTakeFirstOrThrow();
      const pages = await db()
        .selectFrom('pages')
        .selectAll()
        .where('floor_id', '=', floor.id)
        .orderBy('page_no')
        .execute();
      const output = pages.find((p) => p.page_kind === 'output')!;
      const messages = await db()
        .selectFrom('messages')
        .selectAll()
        .where('page_id', '=', output.id)
        .orderBy('seq')
        .execute();
      shapes.push({
        pages: pages.map((p) => [p.page_no, p.page_kind, p.version, p.is_active]),
        outputChecksum: /^sha256:[0-9a-f]{64}$/.test(output.checksum ?? ''),
        messages: messages.map((m) => [m.seq, m.role, m.source, (m.token_count ?? 0) > 0, m.token_encoding]),
        floor: {
          tokens: row.token_in > 0 && row.token_out > 0,
          snapshot: Object.keys((row.state_snapshot ?? {}) as object).sort(),
          updated: row.updated_at >= row.created_at,
        },
        log: {
          action: written.log[0].action,
          status: written.log[0].status,
          target: [written.log[0].target_type, written.log[0].target_id === floor.id],
          metadata: Object.keys(written.log[0].metadata as object).sort(),
          page: (written.log[0].metadata as { page_id: string }).page_id === output.id,
        },
        event: {
          payload: Object.keys(written.event[0].payload as object).sort(),
          page_version: (written.event[0].payload as { page_version: number }).page_version,
          refs: [
            written.event[0].page_id === output.id,
            written.event[0].message_id === messages[0].id,
            written.event[0].operation_log_id === written.log[0].id,
            written.event[0].correlation_id === runId,
          ],
        },
        prompt: Object.keys(written.prompt[0].trace as object).sort(),
        variables: written.variables[0].local_view,
        run: {
          status: written.run?.status,
          phase: written.run?.phase,
          completed: written.run?.completed_at !== null,
        },
      });
    }
    // The detached run's metadata says so; everything else is the same shape.
    expect(shapes[0]).toEqual(shapes[1]);
    expect(shapes[0].event.page_version).toBe(1);
    const sequences = await db()
      .selectFrom('project_events')
      .select('sequence')
      .where('project_id', '=', session.projectId)
      .where('type', '=', 'floor.committed')
      .orderBy('sequence')
      .execute();
    expect(sequences).toHaveLength(2);
    // The run row stores the sequence of its last event (`done`).
    const firstRun = await runRow(t, first.body.data.run_id);
    const detachedRun = await runRow(t, done.run_id);
    expect(detachedRun!.last_event_seq).toBe(Number(second.messages.at(-1)!.id));
    expect(firstRun!.last_event_seq).toBeGreaterThan(2);
  });

  it('answers 409 generation_target_stale when the head moved during generation, and writes nothing', async () => {
    const session = await createSession(t);
    fake.script({ reply: 'Base.' });
    const base = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'Base' });
    expect(base.status).toBe(200);
    const { call, start } = await generating(session.id);
    // Another writer moves the head back meanwhile (what a concurrent reset would do).
    await db()
      .updateTable('branches')
      .set({ head_floor_id: base.body.data.floor_id })
      .where('id', '=', start.branch_id)
      .execute();
    await call.waitForEnd();
    expect(call.types.at(-1)).toBe('error');
    expect(call.dataOf<{ code: string }>('error')[0].code).toBe('generation_target_stale');

    const written = await writtenFor(start.run_id, start.floor_id);
    expect(written.event).toHaveLength(0);
    expect(written.prompt).toHaveLength(0);
    expect(written.variables).toHaveLength(0);
    expect(written.log.map((l) => l.status)).toEqual(['failed']);
    expect(written.run).toMatchObject({ status: 'failed' });
    const floors = await floorsOf(t, session.id);
    expect(floors.map((f) => f.id)).toEqual([base.body.data.floor_id]);
  });

  it('answers 409 commit_conflict when the run was ended during generation, and writes nothing', async () => {
    const session = await createSession(t);
    const { call, start } = await generating(session.id);
    // Another process ended the run meanwhile (a lease takeover).
    await db()
      .updateTable('generation_runs')
      .set({ status: 'failed', phase: 'failed' })
      .where('id', '=', start.run_id)
      .execute();
    await call.waitForEnd();
    expect(call.dataOf<{ code: string }>('error')[0].code).toBe('commit_conflict');

    const written = await writtenFor(start.run_id, start.floor_id);
    expect(written.event).toHaveLength(0);
    expect(written.prompt).toHaveLength(0);
    expect(written.log.filter((l) => l.status === 'succeeded')).toHaveLength(0);
    const floor = await db()
      .selectFrom('floors')
      .select(['state'])
      .where('id', '=', start.floor_id)
      .executeTakeFirst();
    expect(floor?.state).not.toBe('committed');
    const outputs = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pages WHERE floor_id = ${start.floor_id} AND page_kind = 'output'`.execute(
      db(),
    );
    expect(outputs.rows[0].n).toBe(0);
  });
});
