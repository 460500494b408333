import { appendGeneratingFloor, appendTurns, createLongChat } from '../support/factories/conversation';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

interface FloorJson {
  id: string;
  floor_no: number;
  branch_id: string;
  parent_floor_id: string | null;
  pages: Array<{ page_kind: string; messages: Array<{ role: string; content: string }> }>;
  [field: string]: unknown;
}

/**
 * `GET /sessions/:id/floors` (CONTRACT.md "Sessions"): ascending floor_no, default 100 and max 500,
 * `after_floor_no` forward and `before_floor_no` backward with `meta.has_more`, on a 5,000-floor chat
 * read by windows; branch and session errors; isolation.
 */
describe('Conversations: transcript', () => {
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;
  let longSession: string;
  let longFloorIds: string[];
  const FLOORS = 5000;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    bob = await createAccountCaller(t, { name: 'Bob' });
    const session = await createSession(t, { apiKey: alice.apiKey, body: { greeting: false } });
    longSession = session.id;
    const row = await findSessionRow(t, session.id);
    ({ floorIds: longFloorIds } = await createLongChat(t, row!, FLOORS));
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  const floors = async (sessionId: string, query: string, key = alice.apiKey, status = 200) => {
    const res = await t.http.get(`/sessions/${sessionId}/floors${query}`).set('x-api-key', key);
    expect(res.status).toBe(status);
    return res.body as {
      data: FloorJson[];
      meta: { limit: number; has_more: boolean };
      error?: { code: string };
    };
  };
  const numbers = (body: { data: FloorJson[] }) => body.data.map((f) => f.floor_no);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it('documents the conversation routes in the OpenAPI document', async () => {
    const doc = await t.http.get('/openapi.json').expect(200);
    for (const path of [
      '/sessions/{id}/floors',
      '/sessions/{id}/branches',
      '/sessions/{id}/branches/{branchId}/reset',
      '/floors/{id}',
      '/floors/{id}/branch',
      '/pages/{id}/activate',
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(path);
    }
  });

  it('returns the first 100 floors by default, ascending, with pages and messages', async () => {
    const body = await floors(longSession, '');
    expect(body.meta).toEqual({ limit: 100, has_more: true });
    expect(numbers(body)).toEqual(range(0, 99));
    expect(body.data.map((f) => f.id)).toEqual(longFloorIds.slice(0, 100));
    expect(body.data[1].parent_floor_id).toBe(longFloorIds[0]);
    expect(body.data[7].pages.map((p) => [p.page_kind, p.messages[0].role, p.messages[0].content])).toEqual([
      ['input', 'user', 'input of floor 7'],
      ['output', 'assistant', 'output of floor 7'],
    ]);
  });

  it('accepts limit 500 and refuses 501 and 0', async () => {
    const body = await floors(longSession, '?limit=500');
    expect(numbers(body)).toEqual(range(0, 499));
    expect(body.meta).toEqual({ limit: 500, has_more: true });
    for (const bad of [
      '?limit=501',
      '?limit=0',
      '?limit=-1',
      '?limit=abc',
      '?after_floor_no=-1',
      '?before_floor_no=x',
    ]) {
      expect((await floors(longSession, bad, alice.apiKey, 400)).error?.code).toBe('validation_error');
    }
  });

  it('pages forward with after_floor_no to the end', async () => {
    const next = await floors(longSession, '?after_floor_no=99&limit=50');
    expect(numbers(next)).toEqual(range(100, 149));
    expect(next.meta.has_more).toBe(true);
    const tail = await floors(longSession, `?after_floor_no=${FLOORS - 501}&limit=500`);
    expect(numbers(tail)).toEqual(range(FLOORS - 500, FLOORS - 1));
    expect(tail.meta).toEqual({ limit: 500, has_more: false });
    const beyond = await floors(longSession, `?after_floor_no=${FLOORS - 1}`);
    expect(beyond).toEqual({ data: [], meta: { limit: 100, has_more: false } });
    // Walking the whole chat forward visits every floor once.
    const seen: number[] = [];
    let after: number | null = null;
    for (;;) {
      const page: { data: FloorJson[]; meta: { has_more: boolean } } = await floors(
        longSession,
        `?limit=500${after === null ? '' : `&after_floor_no=${after}`}`,
      );
      seen.push(...numbers(page));
      if (!page.meta.has_more) break;
      after = page.data[page.data.length - 1].floor_no;
    }
    expect(seen).toEqual(range(0, FLOORS - 1));
  });

  it('reads backward with before_floor_no: the floors just below it, still ascending', async () => {
    const last = await floors(longSession, `?before_floor_no=${FLOORS}`);
    expect(numbers(last)).toEqual(range(FLOORS - 100, FLOORS - 1));
    expect(last.data.map((f) => f.id)).toEqual(longFloorIds.slice(FLOORS - 100));
    expect(last.meta).toEqual({ limit: 100, has_more: true });
    // A bound past the head reads from the head.
    expect(numbers(await floors(longSession, `?before_floor_no=999999&limit=3`))).toEqual(
      range(FLOORS - 3, FLOORS - 1),
    );
    const start = await floors(longSession, '?before_floor_no=500&limit=500');
    expect(numbers(start)).toEqual(range(0, 499));
    expect(start.meta.has_more).toBe(false);
    const near = await floors(longSession, '?before_floor_no=501&limit=500');
    expect(numbers(near)).toEqual(range(1, 500));
    expect(near.meta.has_more).toBe(true);
    expect(await floors(longSession, '?before_floor_no=0')).toEqual({
      data: [],
      meta: { limit: 100, has_more: false },
    });
  });

  it('with both bounds returns the first floors strictly between them', async () => {
    const body = await floors(longSession, '?after_floor_no=10&before_floor_no=20&limit=5');
    expect(numbers(body)).toEqual(range(11, 15));
    expect(body.meta.has_more).toBe(true);
    const all = await floors(longSession, '?after_floor_no=10&before_floor_no=20&limit=9');
    expect(numbers(all)).toEqual(range(11, 19));
    expect(all.meta.has_more).toBe(false);
    expect((await floors(longSession, '?after_floor_no=10&before_floor_no=11')).data).toEqual([]);
  });

  it('answers 404 branch_not_found for an unknown branch or a branch of another session', async () => {
    expect((await floors(longSession, '?branch_id=br_unknown', alice.apiKey, 404)).error?.code).toBe(
      'branch_not_found',
    );
    const other = await createSession(t, { apiKey: alice.apiKey, body: { greeting: false } });
    const branches = await t.http.get(`/sessions/${other.id}/branches`).set('x-api-key', alice.apiKey);
    const otherMain = branches.body.data[0].id as string;
    expect((await floors(longSession, `?branch_id=${otherMain}`, alice.apiKey, 404)).error?.code).toBe(
      'branch_not_found',
    );
    expect((await floors(other.id, `?branch_id=${otherMain}`)).data).toEqual([]);
  });

  it('hides a session from another account (404 not_found) and lets Project members read', async () => {
    expect((await floors(longSession, '', bob.apiKey, 404)).error?.code).toBe('not_found');
    expect((await floors('ses_missing', '', alice.apiKey, 404)).error?.code).toBe('not_found');
    const res = await t.http.get(`/sessions/${longSession}/branches`).set('x-api-key', bob.apiKey);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    const session = await findSessionRow(t, longSession);
    const project = await t.resources.database.db
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', session!.project_id)
      .executeTakeFirstOrThrow();
    const carol = await createAccountCaller(t, { name: 'Carol' });
    await addMember(t, project, carol, 'observer');
    expect(numbers(await floors(longSession, '?limit=2', carol.apiKey))).toEqual([0, 1]);
  });

  it('shows floors written by turns, with a generating head', async () => {
    const session = await createSession(t, { apiKey: alice.apiKey, body: { greeting: false } });
    const row = await findSessionRow(t, session.id);
    const written = await appendTurns(t, row!, 3);
    const body = await floors(session.id, '');
    expect(body.data.map((f) => f.id)).toEqual(written.map((f) => f.id));
    expect(body.data.map((f) => [f.state, f.token_in, f.token_out])).toEqual([
      ['committed', 10, 5],
      ['committed', 10, 5],
      ['committed', 10, 5],
    ]);
    const generating = await appendGeneratingFloor(t, row!);
    const after = await floors(session.id, '?after_floor_no=2');
    expect(after.data).toHaveLength(1);
    expect(after.data[0]).toMatchObject({
      id: generating.id,
      floor_no: 3,
      parent_floor_id: written[2].id,
      state: 'generating',
      reasoning_text: null,
    });
    expect(after.data[0].pages.map((p) => p.page_kind)).toEqual(['input']);
  });
});
