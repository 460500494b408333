import { addOutputPage, readBranchHistory } from '@hearth/app';
import {
  conversationRepository,
  inTransaction,
  operationLogsRepository,
  type SessionRow,
} from '@hearth/persistence';
import { appendGeneratingFloor, appendTurns, createFloor } from '../support/factories/conversation';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { archiveProject } from '../support/factories/projects';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

interface FloorJson {
  id: string;
  floor_no: number;
  branch_id: string;
  parent_floor_id: string | null;
  [field: string]: unknown;
}

/**
 * Branches (CONTRACT.md `POST /floors/:id/branch`; docs/decisions.md "Conversations"): a branch from a
 * middle floor shares the history up to it and diverges after; names and their conflicts; reset moves a
 * head back and supersedes the floors after it; operation logs `checkout_branch` and `reset_branch`;
 * another account gets 404 everywhere.
 */
describe('Conversations: branches and reset', () => {
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    bob = await createAccountCaller(t, { name: 'Bob' });
  });
  afterAll(async () => {
    await t.close();
  });

  const newSession = async (key = alice.apiKey): Promise<SessionRow> => {
    const s = await createSession(t, { apiKey: key, body: { greeting: false } });
    return (await findSessionRow(t, s.id))!;
  };
  const branchFrom = (floorId: string, body: object = {}, key = alice.apiKey) =>
    t.http.post(`/floors/${floorId}/branch`).set('x-api-key', key).send(body);
  const transcript = async (sessionId: string, branchId?: string) => {
    const res = await t.http
      .get(`/sessions/${sessionId}/floors${branchId ? `?branch_id=${branchId}` : ''}`)
      .set('x-api-key', alice.apiKey);
    expect(res.status).toBe(200);
    return res.body.data as FloorJson[];
  };
  const branches = async (sessionId: string) =>
    (await t.http.get(`/sessions/${sessionId}/branches`).set('x-api-key', alice.apiKey)).body.data as Array<
      Record<string, any>
    >;
  const reset = (sessionId: string, branchId: string, body: object, key = alice.apiKey) =>
    t.http.post(`/sessions/${sessionId}/branches/${branchId}/reset`).set('x-api-key', key).send(body);
  const logsOf = (action: string, sessionId: string) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId: alice.accountId, filters: { action, session_id: sessionId } },
      { limit: 100, offset: 0, sortOrder: 'asc' },
    );

  it('branches from a middle floor: shared history up to it, divergent after', async () => {
    const session = await newSession();
    const main = await appendTurns(t, session, 8, { text: (i) => `main ${i}` });
    const res = await branchFrom(main[4].id);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      data: { branch_id: expect.stringMatching(/^br_/), session_id: session.id, source_floor_id: main[4].id },
    });
    const branchId = res.body.data.branch_id as string;
    // Before any new floor, the branch's history is main's up to floor 4.
    expect((await transcript(session.id, branchId)).map((f) => f.id)).toEqual(
      main.slice(0, 5).map((f) => f.id),
    );
    const own = await appendTurns(t, session, 3, { branchId, text: (i) => `side ${i}` });
    const side = await transcript(session.id, branchId);
    expect(side.map((f) => f.floor_no)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(side.map((f) => f.id)).toEqual([...main.slice(0, 5), ...own].map((f) => f.id));
    expect(side[5].parent_floor_id).toBe(main[4].id);
    expect(side.slice(5).every((f) => f.branch_id === branchId)).toBe(true);
    // main is unchanged.
    expect((await transcript(session.id)).map((f) => f.id)).toEqual(main.map((f) => f.id));
    // A branch of the branch, from its own floor 6, shares both.
    const nested = await branchFrom(own[1].id, { name: 'nested' });
    expect(nested.status).toBe(201);
    const deeper = await appendTurns(t, session, 1, { branchId: nested.body.data.branch_id });
    expect((await transcript(session.id, nested.body.data.branch_id)).map((f) => f.id)).toEqual(
      [...main.slice(0, 5), own[0], own[1], deeper[0]].map((f) => f.id),
    );
    // Paging a branch backward crosses its fork.
    const back = await t.http
      .get(`/sessions/${session.id}/floors?branch_id=${branchId}&before_floor_no=7&limit=4`)
      .set('x-api-key', alice.apiKey);
    expect(back.body.data.map((f: FloorJson) => f.id)).toEqual(
      [main[3], main[4], own[0], own[1]].map((f) => f.id),
    );
    expect(back.body.meta).toEqual({ limit: 4, has_more: true });

    const list = await branches(session.id);
    expect(list.map((b) => [b.name, b.source_floor_id, b.head_floor_id, b.head_floor_no])).toEqual([
      ['main', null, main[7].id, 7],
      ['branch-1', main[4].id, own[2].id, 7],
      ['nested', own[1].id, deeper[0].id, 7],
    ]);
    const [log] = await logsOf('checkout_branch', session.id);
    expect(log).toMatchObject({
      action: 'checkout_branch',
      status: 'succeeded',
      target_type: 'session_branch',
      target_id: branchId,
      session_id: session.id,
      branch_id: branchId,
      floor_id: main[4].id,
      project_id: session.project_id,
    });
  });

  it('names branches branch-<n> by default and refuses a taken name', async () => {
    const session = await newSession();
    const [f0, f1] = await appendTurns(t, session, 2);
    expect((await branchFrom(f0.id)).status).toBe(201);
    expect((await branchFrom(f1.id, { name: 'branch-3' })).status).toBe(201);
    expect((await branchFrom(f1.id)).status).toBe(201);
    expect((await branchFrom(f1.id)).status).toBe(201);
    expect((await branches(session.id)).map((b) => b.name)).toEqual([
      'main',
      'branch-1',
      'branch-3',
      'branch-2',
      'branch-4',
    ]);
    for (const name of ['main', 'branch-3']) {
      const res = await branchFrom(f0.id, { name });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('branch_name_conflict');
    }
    expect((await branchFrom(f0.id, { name: 'n'.repeat(120) })).status).toBe(201);
    for (const body of [{ name: 'n'.repeat(121) }, { name: '' }, { name: '  ' }, { name: 3 }, { other: 1 }]) {
      const res = await branchFrom(f0.id, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    // Concurrent default names never collide.
    const results = await Promise.all(Array.from({ length: 8 }, () => branchFrom(f1.id)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    const names = (await branches(session.id)).map((b) => b.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toHaveLength(14);
  });

  it('refuses a floor that is not committed, unknown floors and other accounts’ floors', async () => {
    const session = await newSession();
    await appendTurns(t, session, 1);
    const generating = await appendGeneratingFloor(t, session);
    const res = await branchFrom(generating.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('floor_not_committed');
    expect((await branchFrom('flr_missing')).body.error.code).toBe('floor_not_found');
    const bobs = await newSession(bob.apiKey);
    const [bobFloor] = await appendTurns(t, bobs, 1);
    const foreign = await branchFrom(bobFloor.id);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('floor_not_found');
    const detail = await t.http.get(`/floors/${bobFloor.id}`).set('x-api-key', alice.apiKey);
    expect(detail.status).toBe(404);
    expect(detail.body.error.code).toBe('floor_not_found');
    const bobBranches = await t.http.get(`/sessions/${bobs.id}/branches`).set('x-api-key', alice.apiKey);
    expect(bobBranches.status).toBe(404);
    expect(bobBranches.body.error.code).toBe('not_found');
    expect((await t.http.get('/floors/flr_missing').set('x-api-key', alice.apiKey)).body.error.code).toBe(
      'floor_not_found',
    );
    expect((await logsOf('checkout_branch', session.id)).length).toBe(0);
  });

  it('lets Project members read but not branch (403), and refuses archived sessions (409)', async () => {
    const session = await newSession();
    const [floor] = await appendTurns(t, session, 1);
    const project = await t.resources.database.db
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', session.project_id)
      .executeTakeFirstOrThrow();
    const carol = await createAccountCaller(t, { name: 'Carol' });
    await addMember(t, project, carol, 'observer');
    const denied = await branchFrom(floor.id, {}, carol.apiKey);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('project_access_denied');
    expect((await t.http.get(`/floors/${floor.id}`).set('x-api-key', carol.apiKey)).status).toBe(200);
    const main = (await branches(session.id))[0];
    const deniedReset = await reset(session.id, main.id, { floor_id: floor.id }, carol.apiKey);
    expect(deniedReset.status).toBe(403);

    await t.http.patch(`/sessions/${session.id}`).set('x-api-key', alice.apiKey).send({ status: 'archived' });
    const archived = await branchFrom(floor.id);
    expect(archived.status).toBe(409);
    expect(archived.body.error.code).toBe('session_archived');
    expect((await reset(session.id, main.id, { floor_id: floor.id })).body.error.code).toBe(
      'session_archived',
    );
  });

  it('refuses conversation writes in an archived Project (409 project_archived) and still reads', async () => {
    const session = await newSession();
    const [floor] = await appendTurns(t, session, 1);
    await inTransaction(t.resources.database.db, ({ tx }) =>
      addOutputPage(tx, {
        floorId: floor.id,
        messages: [{ role: 'assistant', content: 'v2', source: 'model' }],
      }),
    );
    const main = (await branches(session.id))[0];
    await archiveProject(t, session.project_id);
    const codes = [
      await branchFrom(floor.id),
      await reset(session.id, main.id, { floor_id: floor.id }),
      await t.http
        .post(
          `/pages/${(await t.http.get(`/floors/${floor.id}`).set('x-api-key', alice.apiKey)).body.data.pages[1].id}/activate`,
        )
        .set('x-api-key', alice.apiKey),
    ].map((r) => `${r.status} ${r.body.error?.code}`);
    expect(codes).toEqual(Array(3).fill('409 project_archived'));
    expect((await transcript(session.id)).map((f) => f.id)).toEqual([floor.id]);
  });

  it('resets a branch to an earlier floor, superseding the floors after it', async () => {
    const session = await newSession();
    const main = await appendTurns(t, session, 8);
    const mainId = (await branches(session.id))[0].id as string;
    // A branch made from floor 6 before the reset keeps its history.
    const side = (await branchFrom(main[6].id)).body.data.branch_id as string;

    const res = await reset(session.id, mainId, { floor_id: main[3].id });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: mainId,
      session_id: session.id,
      name: 'main',
      source_floor_id: null,
      head_floor_id: main[3].id,
      head_floor_no: 3,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect((await transcript(session.id)).map((f) => f.id)).toEqual(main.slice(0, 4).map((f) => f.id));
    const gone = await t.http.get(`/floors/${main[5].id}`).set('x-api-key', alice.apiKey);
    expect(gone.status).toBe(200);
    expect(gone.body.data).toMatchObject({
      id: main[5].id,
      session_id: session.id,
      superseded_at: expect.any(Number),
      superseded_by_floor_id: main[3].id,
    });
    const kept = await t.http.get(`/floors/${main[3].id}`).set('x-api-key', alice.apiKey);
    expect(kept.body.data).toMatchObject({ superseded_at: null, superseded_by_floor_id: null });
    expect((await transcript(session.id, side)).map((f) => f.id)).toEqual(main.slice(0, 7).map((f) => f.id));

    // New turns continue from the new head.
    const next = await appendTurns(t, session, 2);
    expect(next[0].floor_no).toBe(4);
    expect(next[0].parent_floor_id).toBe(main[3].id);
    expect((await transcript(session.id)).map((f) => f.id)).toEqual(
      [...main.slice(0, 4), ...next].map((f) => f.id),
    );

    const [log] = await logsOf('reset_branch', session.id);
    expect(log).toMatchObject({
      action: 'reset_branch',
      target_type: 'session_branch',
      target_id: mainId,
      branch_id: mainId,
      floor_id: main[3].id,
      session_id: session.id,
    });
    expect(log.before_ref).toEqual({ head_floor_id: main[7].id, head_floor_no: 7 });
    expect(log.after_ref).toEqual({ head_floor_id: main[3].id, head_floor_no: 3 });
    expect(log.metadata).toEqual({ superseded_floor_count: 4 });

    // Resetting to the head writes nothing.
    const same = await reset(session.id, mainId, { floor_id: next[1].id });
    expect(same.status).toBe(200);
    expect(same.body.data.head_floor_id).toBe(next[1].id);
    expect(await logsOf('reset_branch', session.id)).toHaveLength(1);

    // A branch can be reset below its fork point: only its own floors are superseded.
    const sideReset = await reset(session.id, side, { floor_id: main[1].id });
    expect(sideReset.status).toBe(200);
    expect((await transcript(session.id, side)).map((f) => f.id)).toEqual(main.slice(0, 2).map((f) => f.id));
  });

  it('answers reset errors with their codes and writes nothing', async () => {
    const session = await newSession();
    const main = await appendTurns(t, session, 4);
    const mainId = (await branches(session.id))[0].id as string;
    const side = (await branchFrom(main[1].id)).body.data.branch_id as string;
    const sideFloors = await appendTurns(t, session, 1, { branchId: side });
    const other = await newSession();
    const [otherFloor] = await appendTurns(t, other, 1);
    const expectError = async (res: { status: number; body: any }, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
    };
    // A floor of another branch's divergent part is not in main's history.
    await expectError(
      await reset(session.id, mainId, { floor_id: sideFloors[0].id }),
      409,
      'floor_not_in_branch',
    );
    await expectError(await reset(session.id, side, { floor_id: main[3].id }), 409, 'floor_not_in_branch');
    await expectError(await reset(session.id, mainId, { floor_id: otherFloor.id }), 404, 'floor_not_found');
    await expectError(await reset(session.id, mainId, { floor_id: 'flr_missing' }), 404, 'floor_not_found');
    await expectError(
      await reset(session.id, 'br_missing', { floor_id: main[0].id }),
      404,
      'branch_not_found',
    );
    const otherMain = (await branches(other.id))[0].id as string;
    await expectError(await reset(session.id, otherMain, { floor_id: main[0].id }), 404, 'branch_not_found');
    await expectError(await reset(session.id, mainId, {}), 400, 'validation_error');
    await expectError(
      await reset(session.id, mainId, { floor_id: main[0].id }, bob.apiKey),
      404,
      'not_found',
    );
    await expectError(await reset('ses_missing', mainId, { floor_id: main[0].id }), 404, 'not_found');
    // While the branch generates, no reset.
    await appendGeneratingFloor(t, session);
    await expectError(await reset(session.id, mainId, { floor_id: main[0].id }), 409, 'generation_conflict');
    expect(await logsOf('reset_branch', session.id)).toEqual([]);
    const superseded = await t.resources.database.db
      .selectFrom('floors')
      .select('id')
      .where('session_id', '=', session.id)
      .where('superseded_at', 'is not', null)
      .execute();
    expect(superseded).toEqual([]);
  });

  it('reads the history of floors written before lines (factory rows) by walking parents', async () => {
    const session = await newSession();
    const a = await createFloor(t, session);
    const b = await createFloor(t, session);
    expect((await transcript(session.id)).map((f) => f.id)).toEqual([a.floor.id, b.floor.id]);
    const res = await branchFrom(a.floor.id);
    expect(res.status).toBe(201);
    expect((await transcript(session.id, res.body.data.branch_id)).map((f) => f.id)).toEqual([a.floor.id]);
    // Turns appended after them start a line; the lineage still reaches floor 0.
    const turns = await appendTurns(t, session, 2);
    const all = [a.floor, b.floor, ...turns].map((f) => f.id);
    expect((await transcript(session.id)).map((f) => f.id)).toEqual(all);
    const back = await t.http
      .get(`/sessions/${session.id}/floors?before_floor_no=3&limit=2`)
      .set('x-api-key', alice.apiKey);
    expect(back.body.data.map((f: FloorJson) => f.id)).toEqual(all.slice(1, 3));
    const main = (await conversationRepository.findBranchByName(
      t.resources.database.db,
      session.id,
      'main',
    ))!;
    const history = await readBranchHistory(t.resources.database.db, main);
    expect([...new Set(history.messages.map((m) => m.floor_id))]).toEqual(turns.map((f) => f.id));
    const withFactoryPages = await readBranchHistory(t.resources.database.db, main, { uptoFloorNo: 1 });
    expect(withFactoryPages.head?.id).toBe(b.floor.id);
    const reset = await t.http
      .post(`/sessions/${session.id}/branches/${main.id}/reset`)
      .set('x-api-key', alice.apiKey)
      .send({ floor_id: b.floor.id });
    expect(reset.status).toBe(200);
    expect((await transcript(session.id)).map((f) => f.id)).toEqual(all.slice(0, 2));
  });
});
