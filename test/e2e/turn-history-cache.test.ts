import { sql } from 'kysely';
import { PruneHistoryEditsUseCase, RunMaintenanceScanUseCase } from '@hearth/app';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { floorsOf, startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

/**
 * The turn history cache (docs/decisions.md "Turn history cache"): turns read committed floors from
 * memory under the session's history revision, so every change to a committed floor must make a new
 * revision and reach the next prompt, while a chat that only grows keeps its revision. Each case
 * fills the cache with a dry-run first, changes the chat, then checks the next dry-run.
 */
describe('turn history cache', () => {
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

  const post = (path: string, body: Record<string, unknown> = {}) =>
    t.http
      .post(path)
      .set('x-api-key', ADMIN_KEY)
      .send(body)
      .then((r) => r);

  /** The prompt a dry-run of `message` assembles, as one text. */
  async function prompt(sessionId: string, body: Record<string, unknown> = {}): Promise<string> {
    const res = await post(`/sessions/${sessionId}/respond/dry-run`, { message: 'what now?', ...body });
    expect(res.status).toBe(200);
    return (res.body.data.messages as Array<{ content: string }>).map((m) => m.content).join('\n');
  }

  const revisionRows = async (sessionId: string): Promise<number> => {
    const result = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM session_history_edits WHERE session_id = ${sessionId}`.execute(
      t.resources.database.db,
    );
    return result.rows[0].n;
  };

  async function chat(replies: string[]) {
    const session = await createSession(t);
    const floors: Array<{ floor_id: string }> = [];
    for (const [i, reply] of replies.entries()) {
      fake.script({ reply });
      const res = await post(`/sessions/${session.id}/respond`, { message: `user says ${i}` });
      expect(res.status).toBe(200);
      floors.push(res.body.data);
    }
    return { session, floors };
  }

  it('a growing chat keeps its revision and every new floor reaches the prompt', async () => {
    const { session } = await chat(['reply-alpha', 'reply-beta']);
    expect(await revisionRows(session.id)).toBe(0);
    const first = await prompt(session.id);
    expect(first).toContain('reply-alpha');
    expect(first).toContain('reply-beta');

    fake.script({ reply: 'reply-gamma' });
    expect((await post(`/sessions/${session.id}/respond`, { message: 'more' })).status).toBe(200);
    expect(await revisionRows(session.id)).toBe(0);
    const second = await prompt(session.id);
    expect(second).toContain('reply-alpha');
    expect(second).toContain('reply-gamma');
    // Oldest first, as read from storage.
    expect(second.indexOf('reply-alpha')).toBeLessThan(second.indexOf('reply-beta'));
    expect(second.indexOf('reply-beta')).toBeLessThan(second.indexOf('reply-gamma'));
  });

  it('a retry and a swipe back of an old floor change the next prompt', async () => {
    const { session, floors } = await chat(['reply-one', 'reply-two', 'reply-three']);
    expect(await prompt(session.id)).toContain('reply-one');

    fake.script({ reply: 'reply-one-retried' });
    expect((await post(`/floors/${floors[0].floor_id}/retry`)).status).toBe(200);
    expect(await revisionRows(session.id)).toBeGreaterThan(0);
    const retried = await prompt(session.id);
    expect(retried).toContain('reply-one-retried');
    expect(retried).not.toContain('reply-one\n');
    expect(retried).toContain('reply-three');

    const floor0 = (await floorsOf(t, session.id)).find((f) => f.id === floors[0].floor_id)!;
    const original = floor0.pages.find(
      (p) => p.page_kind === 'output' && p.messages.some((m) => m.content === 'reply-one'),
    )!;
    expect((await post(`/pages/${original.id}/activate`)).status).toBe(200);
    const swiped = await prompt(session.id);
    expect(swiped).toContain('reply-one');
    expect(swiped).not.toContain('reply-one-retried');
  });

  it('edit-and-regenerate of an old floor changes the next prompt', async () => {
    const { session, floors } = await chat(['reply-a', 'reply-b']);
    expect(await prompt(session.id)).toContain('user says 0');
    const floor0 = (await floorsOf(t, session.id)).find((f) => f.id === floors[0].floor_id)!;
    const userMessage = floor0.pages
      .find((p) => p.page_kind === 'input' && p.is_active)!
      .messages.find((m) => m.role === 'user')!;
    fake.script({ reply: 'reply-a-after-edit' });
    const res = await post(`/messages/${userMessage.id}/edit-and-regenerate`, { content: 'edited words' });
    expect(res.status).toBe(200);
    const next = await prompt(session.id);
    expect(next).toContain('edited words');
    expect(next).not.toContain('user says 0');
    expect(next).toContain('reply-a-after-edit');
  });

  it('regenerate of the head changes the next prompt', async () => {
    const { session } = await chat(['reply-x', 'reply-y']);
    expect(await prompt(session.id)).toContain('reply-y');
    fake.script({ reply: 'reply-y-again' });
    expect((await post(`/sessions/${session.id}/regenerate`)).status).toBe(200);
    const next = await prompt(session.id);
    expect(next).toContain('reply-y-again');
    expect(next).not.toContain('reply-y\n');
  });

  it('branches of one session each see their own lineage from the shared cache', async () => {
    const { session, floors } = await chat(['reply-shared', 'reply-main-only']);
    expect(await prompt(session.id)).toContain('reply-main-only');
    const branched = await post(`/floors/${floors[0].floor_id}/branch`, { name: 'side' });
    expect(branched.status).toBe(201);
    const branchId = branched.body.data.branch_id as string;
    fake.script({ reply: 'reply-side-only' });
    expect(
      (await post(`/sessions/${session.id}/respond`, { message: 'on the side', branch_id: branchId })).status,
    ).toBe(200);

    const side = await prompt(session.id, { branch_id: branchId });
    expect(side).toContain('reply-shared');
    expect(side).toContain('reply-side-only');
    expect(side).not.toContain('reply-main-only');
    const main = await prompt(session.id);
    expect(main).toContain('reply-main-only');
    expect(main).not.toContain('reply-side-only');
    // A source floor in the middle of the lineage: only what came before it.
    const upTo = await prompt(session.id, { source_floor_id: floors[0].floor_id });
    expect(upTo).toContain('reply-shared');
    expect(upTo).not.toContain('reply-main-only');
  });

  it('a change written by anything else to a committed floor (here, straight SQL) reaches the next prompt', async () => {
    const { session } = await chat(['reply-before-patch', 'reply-tail']);
    expect(await prompt(session.id)).toContain('reply-before-patch');
    const db = t.resources.database.db;
    await sql`UPDATE messages SET content = 'reply-patched' WHERE session_id = ${session.id}
      AND content = 'reply-before-patch'`.execute(db);
    expect(await prompt(session.id)).toContain('reply-patched');
    await sql`UPDATE messages SET is_hidden = true WHERE session_id = ${session.id}
      AND content = 'reply-patched'`.execute(db);
    const res = await post(`/sessions/${session.id}/respond/dry-run`, { message: 'what now?' });
    expect(res.status).toBe(200);
    const contents = (res.body.data.messages as Array<{ content: string }>).map((m) => m.content);
    expect(contents.some((c) => c.includes('reply-patched'))).toBe(false);
  });

  it('an edit that commits after a later edit of the same session still reaches the next prompt', async () => {
    const db = t.resources.database.db;
    const { session } = await chat(['reply-first', 'reply-second']);
    expect(await prompt(session.id)).toContain('reply-first');
    let commitLate!: () => void;
    const held = new Promise<void>((resolve) => (commitLate = resolve));
    let edited!: () => void;
    const isEdited = new Promise<void>((resolve) => (edited = resolve));
    // Edit A takes the smaller edit id and stays uncommitted while edit B (larger id) commits.
    const editA = db.connection().execute(async (conn) => {
      await sql`BEGIN`.execute(conn);
      await sql`UPDATE messages SET content = 'reply-first-late' WHERE session_id = ${session.id}
        AND content = 'reply-first'`.execute(conn);
      edited();
      await held;
      await sql`COMMIT`.execute(conn);
    });
    await isEdited;
    await sql`UPDATE messages SET content = 'reply-second-early' WHERE session_id = ${session.id}
      AND content = 'reply-second'`.execute(db);
    const between = await prompt(session.id);
    expect(between).toContain('reply-second-early');
    expect(between).toContain('reply-first');
    expect(between).not.toContain('reply-first-late');
    commitLate();
    await editA;
    const after = await prompt(session.id);
    expect(after).toContain('reply-first-late');
    expect(after).toContain('reply-second-early');
  });

  it('the maintenance prune leaves one row per session and every prompt as it was', async () => {
    const db = t.resources.database.db;
    const prune = t.app.get(PruneHistoryEditsUseCase, { strict: false });
    // What the cases above left is pruned first, so the counts below are this case's own.
    await prune.execute();
    const { session } = await chat(['reply-v0', 'reply-tail']);
    for (const version of ['reply-v1', 'reply-v2', 'reply-v3']) {
      await sql`UPDATE messages SET content = ${version} WHERE session_id = ${session.id}
        AND content LIKE 'reply-v%'`.execute(db);
    }
    const other = await chat(['reply-other']);
    await sql`UPDATE messages SET content = 'reply-other-patched' WHERE session_id = ${other.session.id}
      AND content = 'reply-other'`.execute(db);
    const third = await chat(['reply-third']);
    await sql`UPDATE messages SET content = 'reply-third-1' WHERE session_id = ${third.session.id}
      AND content = 'reply-third'`.execute(db);
    await sql`UPDATE messages SET content = 'reply-third-2' WHERE session_id = ${third.session.id}
      AND content = 'reply-third-1'`.execute(db);
    // Rows left by a session that was deleted.
    await sql`INSERT INTO session_history_edits (session_id)
      VALUES ('ses_gone_for_good'), ('ses_gone_for_good')`.execute(db);
    expect(await revisionRows(session.id)).toBe(3);
    expect(await revisionRows(other.session.id)).toBe(1);
    expect(await revisionRows(third.session.id)).toBe(2);
    expect(await prompt(session.id)).toContain('reply-v3');

    // A batch of one takes the session with the oldest row; the scan step takes the rest.
    expect(await prune.execute(1)).toEqual({ sessions: 1, orphaned: 0, deleted: 3 });
    expect(await revisionRows(session.id)).toBe(1);
    expect(await revisionRows(third.session.id)).toBe(2);
    const scan = await t.app.get(RunMaintenanceScanUseCase, { strict: false }).execute();
    expect(scan.steps.find((s) => s.step === 'history_edit_prune')).toEqual({
      step: 'history_edit_prune',
      ok: true,
      summary: { sessions: 1, orphaned: 1, deleted: 4 },
    });
    expect(await revisionRows(session.id)).toBe(1);
    expect(await revisionRows(other.session.id)).toBe(1);
    expect(await revisionRows(third.session.id)).toBe(1);
    expect(await revisionRows('ses_gone_for_good')).toBe(0);
    expect(await prune.execute()).toEqual({ sessions: 0, orphaned: 0, deleted: 0 });

    expect(await prompt(session.id)).toContain('reply-v3');
    expect(await prompt(third.session.id)).toContain('reply-third-2');
    // A new edit still reaches the next prompt.
    await sql`UPDATE messages SET content = 'reply-v4' WHERE session_id = ${session.id}
      AND content = 'reply-v3'`.execute(db);
    const after = await prompt(session.id);
    expect(after).toContain('reply-v4');
    expect(after).not.toContain('reply-v3');
  });
});
