import {
  addOutputPage,
  appendUserFloor,
  commitFloor,
  discardGeneratingFloor,
  readBranchHistory,
} from '@hearth/app';
import { DomainError } from '@hearth/domain';
import { tokenCounter } from '@hearth/domain/prompt/shared/token-counter';
import { conversationRepository, inTransaction, type SessionRow } from '@hearth/persistence';
import { appendTurns } from '../support/factories/conversation';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The floor writes the turn use cases call (libs/app/src/conversation/floor-writes.ts) and the history
 * read for prompt assembly, on the real database: `generating` → `committed` by conditional updates, one
 * generation per branch, a failure leaves no floor, page versions, token counts stored once.
 */
describe('Conversations: floor writes and branch history', () => {
  let t: TestApp;
  let alice: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await t.close();
  });

  const db = () => t.resources.database.db;
  const newSession = async (): Promise<SessionRow> => {
    const s = await createSession(t, { apiKey: alice.apiKey, body: { greeting: false } });
    return (await findSessionRow(t, s.id))!;
  };
  const mainOf = async (session: SessionRow) =>
    (await conversationRepository.findBranchByName(db(), session.id, 'main'))!;
  const codeOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof DomainError) return `${error.status} ${error.code}`;
      throw error;
    }
    return 'ok';
  };
  const userMessage = (content: string) => [{ role: 'user' as const, content, source: 'user' }];
  const floorsOf = (sessionId: string) =>
    db().selectFrom('floors').selectAll().where('session_id', '=', sessionId).orderBy('floor_no').execute();

  it('appends a generating floor, commits it with an output page, and counts tokens once', async () => {
    const session = await newSession();
    const main = await mainOf(session);
    const appended = await inTransaction(db(), ({ tx }) =>
      appendUserFloor(tx, {
        session,
        branchId: main.id,
        messages: userMessage('Hello there'),
        expectedHeadFloorId: null,
      }),
    );
    expect(appended.floor).toMatchObject({ floor_no: 0, state: 'generating', parent_floor_id: null });
    expect(appended.branch.head_floor_id).toBe(appended.floor.id);
    expect(appended.input.page).toMatchObject({
      page_kind: 'input',
      is_active: true,
      version: 1,
      page_no: 0,
    });
    expect(appended.input.messages[0]).toMatchObject({
      seq: 0,
      role: 'user',
      content: 'Hello there',
      token_count: tokenCounter().count('Hello there'),
      token_encoding: 'o200k_base',
    });
    const committed = await inTransaction(db(), ({ tx }) =>
      commitFloor(tx, {
        floorId: appended.floor.id,
        messages: [{ role: 'assistant', content: 'General Kenobi', source: 'model' }],
        token_in: 12,
        token_out: 4,
        reasoning_text: 'thinking',
        state_snapshot: { variables: { mood: 'calm' } },
      }),
    );
    expect(committed.floor).toMatchObject({
      state: 'committed',
      token_in: 12,
      token_out: 4,
      reasoning_text: 'thinking',
      state_snapshot: { variables: { mood: 'calm' } },
    });
    expect(committed.output.page).toMatchObject({
      page_kind: 'output',
      is_active: true,
      version: 1,
      page_no: 1,
    });
    expect(committed.output.messages[0].token_count).toBe(tokenCounter().count('General Kenobi'));
    // A second commit of the same floor is a conflict and writes nothing.
    expect(
      await codeOf(
        inTransaction(db(), ({ tx }) =>
          commitFloor(tx, {
            floorId: appended.floor.id,
            messages: [{ role: 'assistant', content: 'again', source: 'model' }],
            token_in: 1,
            token_out: 1,
          }),
        ),
      ),
    ).toBe('409 commit_conflict');
    const pages = await conversationRepository.pagesOfFloor(db(), appended.floor.id);
    expect(pages.map((p) => p.page_kind)).toEqual(['input', 'output']);
    // The next floor continues from it.
    const next = await inTransaction(db(), ({ tx }) =>
      appendUserFloor(tx, { session, branchId: main.id, messages: userMessage('next') }),
    );
    expect(next.floor).toMatchObject({ floor_no: 1, parent_floor_id: appended.floor.id });
  });

  it('allows one generation per branch: 20 concurrent appends give 1 floor and 19 generation_conflict', async () => {
    const session = await newSession();
    await appendTurns(t, session, 1);
    const main = await mainOf(session);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        codeOf(
          inTransaction(db(), ({ tx }) =>
            appendUserFloor(tx, { session, branchId: main.id, messages: userMessage(`racer ${i}`) }),
          ),
        ),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r === '409 generation_conflict')).toHaveLength(19);
    const floors = await floorsOf(session.id);
    expect(floors.map((f) => [f.floor_no, f.state])).toEqual([
      [0, 'committed'],
      [1, 'generating'],
    ]);
    // Another branch of the session may generate at the same time.
    const side = await t.http.post(`/floors/${floors[0].id}/branch`).set('x-api-key', alice.apiKey).send({});
    expect(
      await codeOf(
        inTransaction(db(), ({ tx }) =>
          appendUserFloor(tx, { session, branchId: side.body.data.branch_id, messages: userMessage('side') }),
        ),
      ),
    ).toBe('ok');
  });

  it('answers generation_target_stale when the head moved, branch_not_found for another session’s branch', async () => {
    const session = await newSession();
    const [first] = await appendTurns(t, session, 2);
    const main = await mainOf(session);
    expect(
      await codeOf(
        inTransaction(db(), ({ tx }) =>
          appendUserFloor(tx, {
            session,
            branchId: main.id,
            messages: userMessage('x'),
            expectedHeadFloorId: first.id,
          }),
        ),
      ),
    ).toBe('409 generation_target_stale');
    const other = await newSession();
    expect(
      await codeOf(
        inTransaction(db(), ({ tx }) =>
          appendUserFloor(tx, { session: other, branchId: main.id, messages: userMessage('x') }),
        ),
      ),
    ).toBe('404 branch_not_found');
    expect(await floorsOf(other.id)).toEqual([]);
  });

  it('leaves nothing when the transaction fails after the append, and discards a failed generation', async () => {
    const session = await newSession();
    await appendTurns(t, session, 1);
    const main = await mainOf(session);
    const before = await floorsOf(session.id);
    await expect(
      inTransaction(db(), async ({ tx }) => {
        await appendUserFloor(tx, { session, branchId: main.id, messages: userMessage('doomed') });
        throw new Error('model call failed');
      }),
    ).rejects.toThrow('model call failed');
    expect(await floorsOf(session.id)).toEqual(before);
    expect((await mainOf(session)).head_floor_id).toBe(before[0].id);

    // A generation that fails after its own commit of the floor: discard removes it and restores the head.
    const { floor } = await inTransaction(db(), ({ tx }) =>
      appendUserFloor(tx, { session, branchId: main.id, messages: userMessage('will fail') }),
    );
    expect(await inTransaction(db(), ({ tx }) => discardGeneratingFloor(tx, floor.id))).toBe(true);
    expect(await inTransaction(db(), ({ tx }) => discardGeneratingFloor(tx, floor.id))).toBe(false);
    expect(await floorsOf(session.id)).toEqual(before);
    expect((await mainOf(session)).head_floor_id).toBe(before[0].id);
    const leftovers = await db().selectFrom('pages').select('id').where('floor_id', '=', floor.id).execute();
    expect(leftovers).toEqual([]);
    // A committed floor is never discarded.
    expect(await inTransaction(db(), ({ tx }) => discardGeneratingFloor(tx, before[0].id))).toBe(false);
    // The branch continues normally.
    const [again] = await appendTurns(t, session, 1);
    expect(again.floor_no).toBe(1);
  });

  it('adds output page versions to committed floors only', async () => {
    const session = await newSession();
    const [floor] = await appendTurns(t, session, 1);
    const retry = await inTransaction(db(), ({ tx }) =>
      addOutputPage(tx, {
        floorId: floor.id,
        messages: [{ role: 'assistant', content: 'v2', source: 'model' }],
      }),
    );
    expect(retry.page.page).toMatchObject({ page_kind: 'output', version: 2, page_no: 2, is_active: true });
    const pages = await conversationRepository.pagesOfFloor(db(), floor.id);
    expect(pages.map((p) => [p.page_kind, p.version, p.is_active])).toEqual([
      ['input', 1, true],
      ['output', 1, false],
      ['output', 2, true],
    ]);
    const main = await mainOf(session);
    const generating = await inTransaction(db(), ({ tx }) =>
      appendUserFloor(tx, { session, branchId: main.id, messages: userMessage('busy') }),
    );
    expect(
      await codeOf(
        inTransaction(db(), ({ tx }) =>
          addOutputPage(tx, {
            floorId: generating.floor.id,
            messages: [{ role: 'assistant', content: 'x', source: 'model' }],
          }),
        ),
      ),
    ).toBe('409 floor_not_committed');
    expect(
      await codeOf(
        inTransaction(db(), ({ tx }) =>
          addOutputPage(tx, {
            floorId: 'flr_missing',
            messages: [{ role: 'assistant', content: 'x', source: 'model' }],
          }),
        ),
      ),
    ).toBe('404 floor_not_found');
  });

  it('reads a branch history for prompts: lineage oldest first, active pages only, with token counts', async () => {
    const session = await newSession();
    const main = await appendTurns(t, session, 4, { text: (i) => `m${i}` });
    await inTransaction(db(), ({ tx }) =>
      addOutputPage(tx, {
        floorId: main[1].id,
        messages: [{ role: 'assistant', content: 'm1 retried', source: 'model' }],
      }),
    );
    const side = await t.http.post(`/floors/${main[2].id}/branch`).set('x-api-key', alice.apiKey).send({});
    const sideBranch = (await conversationRepository.findBranch(db(), side.body.data.branch_id))!;
    await appendTurns(t, session, 1, { branchId: sideBranch.id, text: () => 's3' });
    const history = await readBranchHistory(
      db(),
      (await conversationRepository.findBranch(db(), sideBranch.id))!,
    );
    expect(history.messages.map((m) => [m.floor_no, m.role, m.content])).toEqual([
      [0, 'user', 'user: m0'],
      [0, 'assistant', 'reply: m0'],
      [1, 'user', 'user: m1'],
      [1, 'assistant', 'm1 retried'],
      [2, 'user', 'user: m2'],
      [2, 'assistant', 'reply: m2'],
      [3, 'user', 'user: s3'],
      [3, 'assistant', 'reply: s3'],
    ]);
    for (const m of history.messages) expect(m.token_count).toBe(tokenCounter().count(m.content));
    expect(history.head?.floor_no).toBe(3);
    const upto = await readBranchHistory(db(), (await mainOf(session))!, { uptoFloorNo: 1 });
    expect(upto.messages.map((m) => m.content)).toEqual(['user: m0', 'reply: m0', 'user: m1', 'm1 retried']);
    expect(upto.head?.id).toBe(main[1].id);
    const windowed = await readBranchHistory(db(), (await mainOf(session))!, {
      fromFloorNo: 2,
      uptoFloorNo: 2,
    });
    expect(windowed.messages.map((m) => m.content)).toEqual(['user: m2', 'reply: m2']);
    const empty = await readBranchHistory(db(), await mainOf(await newSession()));
    expect(empty).toMatchObject({ head: null, messages: [] });
  });
});
