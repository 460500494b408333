import {
  acceptStagedWrites,
  commitFloor,
  loadFloorLocalSnapshot,
  loadVariableViews,
  promoteStagedWrites,
  requireBranchLocalSnapshot,
  snapshotLocalView,
  stageMutations,
  type StageableMutation,
} from '@hearth/app';
import { DomainError } from '@hearth/domain';
import { accountsRepository, inTransaction, variablesRepository, type Db } from '@hearth/persistence';
import { appendGeneratingFloor } from '../support/factories/conversation';
import { createAccountCaller, type Caller } from '../support/factories/members';
import {
  createVariableHosts,
  deleteFloorRow,
  putVariable,
  putVariableBatch,
  type VariableHosts,
} from '../support/factories/variables';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

const set = (key: string, after: unknown, name = key): StageableMutation => ({
  scope: 'local',
  key,
  name,
  op: 'set',
  after,
  deleted: false,
  macro: 'setvar',
});
const remove = (key: string): StageableMutation => ({
  scope: 'local',
  key,
  name: key,
  op: 'delete',
  after: null,
  deleted: true,
  macro: 'flushvar',
});
const evidence = { runId: 'run_ledger', generationAttemptNo: 2 };

/**
 * The turn-facing variable functions on a real database: staging a turn's writes on its page,
 * accepting and promoting them page → floor with trace items, the `{local, global}` views, and the
 * per-floor local snapshots.
 */
describe('Variables: page ledger, promotion, views and snapshots', () => {
  let t: TestApp;
  let db: Db;
  let owner: Caller;
  let other: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    db = t.resources.database.db;
    owner = await createAccountCaller(t, { name: 'Ledger' });
    other = await createAccountCaller(t, { name: 'Other' });
  });
  afterAll(async () => {
    await t.close();
  });

  const floorVariables = (h: VariableHosts) =>
    variablesRepository.listOfTargets(db, owner.accountId, [{ scope: 'floor', scopeId: h.openFloor.id }]);
  const pageVariables = (h: VariableHosts) =>
    variablesRepository.listOfTargets(db, owner.accountId, [{ scope: 'page', scopeId: h.openPage.id }]);
  const ledger = (h: VariableHosts) =>
    variablesRepository.listStagedWrites(db, owner.accountId, h.openPage.id);

  it('stages local writes in order, skips global ones, and continues the sequence on the next call', async () => {
    const h = await createVariableHosts(t, owner);
    const first = await inTransaction(db, ({ tx }) =>
      stageMutations(
        tx,
        h.openPage,
        [
          set('hp', 5),
          { ...set('g', 1), scope: 'global' },
          set('bag', '{"gold":1}', 'bag.gold'),
          set('bag', '{"gold":2}', 'bag.gold'),
          remove('old'),
        ],
        evidence,
        { finalValues: { hp: 5, bag: { gold: 2 } }, source: { toolName: 'macro', providerId: 'st' } },
      ),
    );
    expect(first.map((s) => [s.seq, s.key, s.op, s.value, s.status])).toEqual([
      [0, 'hp', 'set', 5, 'staged'],
      [1, 'bag', 'set', '{"gold":1}', 'staged'],
      [2, 'bag', 'set', { gold: 2 }, 'staged'],
      [3, 'old', 'delete', null, 'staged'],
    ]);
    expect(first[0]).toMatchObject({
      intent: 'promote_to_floor_on_accept',
      conflict_policy: 'replace',
      source: { toolName: 'macro', providerId: 'st' },
      evidence: { runId: 'run_ledger', generationAttemptNo: 2 },
      session_id: h.sessionId,
      branch_id: h.branchId,
      floor_id: h.openFloor.id,
      decision_reason: null,
      resolved_at: null,
    });
    const second = await inTransaction(db, ({ tx }) =>
      stageMutations(tx, h.openPage, [set('mp', 1)], evidence, { intent: 'page_only' }),
    );
    expect(second.map((s) => [s.seq, s.intent])).toEqual([[4, 'page_only']]);
    expect(await inTransaction(db, ({ tx }) => stageMutations(tx, h.openPage, [], evidence))).toEqual([]);
  });

  it('accepts staged writes at page scope (accepted_page_only), applying deletes', async () => {
    const h = await createVariableHosts(t, owner);
    await putVariable(t, owner.apiKey, {
      scope: 'page',
      scope_id: h.openPage.id,
      key: 'old',
      value: 'x',
    }).expect(201);
    await inTransaction(db, async ({ tx }) => {
      await stageMutations(tx, h.openPage, [set('hp', 5), set('hp', 6), remove('old')], evidence);
      await stageMutations(tx, h.openPage, [set('note', 'n')], evidence, { intent: 'page_only' });
    });
    const items = await inTransaction(db, ({ tx }) => acceptStagedWrites(tx, h.openPage));
    expect(items.map((i) => [i.key, i.status, i.decision_reason])).toEqual([
      ['hp', 'accepted_page_only', null],
      ['hp', 'accepted_page_only', null],
      ['old', 'accepted_page_only', null],
      ['note', 'accepted_page_only', 'intent_page_only'],
    ]);
    expect(items.every((i) => typeof i.resolved_at === 'number')).toBe(true);
    expect((await pageVariables(h)).map((v) => [v.key, v.value])).toEqual([
      ['hp', 6],
      ['note', 'n'],
    ]);
    expect(await floorVariables(h)).toEqual([]);
  });

  it('promotes staged and accepted items to the floor with trace items; page_only items stay on the page', async () => {
    const h = await createVariableHosts(t, owner);
    await putVariableBatch(t, owner.apiKey, [
      { scope: 'floor', scope_id: h.openFloor.id, key: 'gone', value: 'floor value' },
    ]).expect(200);
    await inTransaction(db, async ({ tx }) => {
      await stageMutations(tx, h.openPage, [set('a', 1)], evidence);
      await acceptStagedWrites(tx, h.openPage);
      await stageMutations(tx, h.openPage, [set('b', { deep: [1] }), remove('gone')], evidence, {
        finalValues: { b: { deep: [1] } },
      });
      await stageMutations(tx, h.openPage, [set('p', 'page only')], evidence, { intent: 'page_only' });
    });
    const goneId = (await floorVariables(h)).find((v) => v.key === 'gone')!.id;
    const outcome = await inTransaction(db, ({ tx }) => promoteStagedWrites(tx, h.openPage, h.openFloor));
    expect(outcome.items.map((i) => [i.key, i.status, i.decision_reason])).toEqual([
      ['a', 'promoted', null],
      ['b', 'promoted', null],
      ['gone', 'promoted', null],
      ['p', 'accepted_page_only', 'intent_page_only'],
    ]);
    expect(outcome.promotions.map((p) => [p.key, p.from_scope, p.to_scope, p.to_scope_id, p.value])).toEqual([
      ['a', 'page', 'floor', h.openFloor.id, 1],
      ['b', 'page', 'floor', h.openFloor.id, { deep: [1] }],
      ['gone', 'page', 'floor', h.openFloor.id, null],
    ]);
    const floorVars = await floorVariables(h);
    expect(floorVars.map((v) => [v.key, v.value])).toEqual([
      ['a', 1],
      ['b', { deep: [1] }],
    ]);
    const pageVars = await pageVariables(h);
    expect(pageVars.map((v) => v.key)).toEqual(['a', 'b', 'p']);
    expect(outcome.promotions[0]).toMatchObject({
      staged_write_id: outcome.items[0].id,
      source_variable_id: pageVars[0].id,
      target_variable_id: floorVars[0].id,
      from_scope_id: h.openPage.id,
    });
    expect(outcome.promotions[2]).toMatchObject({ source_variable_id: null, target_variable_id: goneId });
    // A second promotion finds nothing left to promote.
    const again = await inTransaction(db, ({ tx }) => promoteStagedWrites(tx, h.openPage, h.openFloor));
    expect(again.promotions).toEqual([]);
    expect(await variablesRepository.listPromotions(db, owner.accountId, h.openPage.id)).toHaveLength(3);
  });

  it('keeps an existing floor value under conflict policy keep_existing', async () => {
    const h = await createVariableHosts(t, owner);
    await putVariable(t, owner.apiKey, {
      scope: 'floor',
      scope_id: h.openFloor.id,
      key: 'k',
      value: 'old',
    }).expect(201);
    await inTransaction(db, ({ tx }) =>
      stageMutations(tx, h.openPage, [set('k', 'new'), set('fresh', 1)], evidence, {
        conflictPolicy: 'keep_existing',
      }),
    );
    const outcome = await inTransaction(db, ({ tx }) => promoteStagedWrites(tx, h.openPage, h.openFloor));
    expect(outcome.items.map((i) => [i.key, i.status, i.decision_reason])).toEqual([
      ['k', 'accepted_page_only', 'floor_value_kept'],
      ['fresh', 'promoted', null],
    ]);
    expect((await floorVariables(h)).map((v) => [v.key, v.value])).toEqual([
      ['fresh', 1],
      ['k', 'old'],
    ]);
    expect(outcome.promotions.map((p) => [p.key, p.conflict_policy])).toEqual([['fresh', 'keep_existing']]);
  });

  it('runs in the caller’s transaction: a failure after promotion leaves nothing', async () => {
    const h = await createVariableHosts(t, owner);
    await inTransaction(db, ({ tx }) => stageMutations(tx, h.openPage, [set('a', 1), set('b', 2)], evidence));
    await expect(
      inTransaction(db, async ({ tx }) => {
        await promoteStagedWrites(tx, h.openPage, h.openFloor);
        throw new Error('commit failed later');
      }),
    ).rejects.toThrow('commit failed later');
    expect((await ledger(h)).map((i) => i.status)).toEqual(['staged', 'staged']);
    expect(await floorVariables(h)).toEqual([]);
    expect(await pageVariables(h)).toEqual([]);
    expect(await variablesRepository.listPromotions(db, owner.accountId, h.openPage.id)).toEqual([]);
  });

  it('refuses to promote a page onto another floor', async () => {
    const h = await createVariableHosts(t, owner);
    await expect(
      inTransaction(db, ({ tx }) => promoteStagedWrites(tx, h.openPage, h.committedFloor)),
    ).rejects.toThrow(/not on floor/);
  });

  it('promotes at commit on the committed floor, which the routes then keep locked', async () => {
    // A real turn: a generating floor on a fresh session's main branch, committed with its output page.
    const created = await t.http.post('/sessions').set('x-api-key', owner.apiKey).send({}).expect(201);
    const session = { id: created.body.data.id as string, account_id: owner.accountId };
    const generating = await appendGeneratingFloor(t, session);
    const { floor, output } = await inTransaction(db, async ({ tx }) => {
      const committed = await commitFloor(tx, {
        floorId: generating.id,
        messages: [{ role: 'assistant', content: 'reply', source: 'model' }],
        token_in: 1,
        token_out: 1,
      });
      await stageMutations(tx, committed.output.page, [set('seen', true)], evidence);
      await promoteStagedWrites(tx, committed.output.page, committed.floor);
      return { floor: committed.floor, output: committed.output.page };
    });
    const floorVars = await variablesRepository.listOfTargets(db, owner.accountId, [
      { scope: 'floor', scopeId: floor.id },
    ]);
    expect(floorVars.map((v) => [v.key, v.value])).toEqual([['seen', true]]);
    const locked = await putVariable(t, owner.apiKey, {
      scope: 'floor',
      scope_id: floor.id,
      key: 'seen',
      value: false,
    });
    expect([locked.status, locked.body.error.code]).toEqual([409, 'variable_target_locked']);
    const pageLocked = await putVariable(t, owner.apiKey, {
      scope: 'page',
      scope_id: output.id,
      key: 'x',
      value: 1,
    });
    expect([pageLocked.status, pageLocked.body.error.code]).toEqual([409, 'variable_target_locked']);
    const views = await loadVariableViews(db, owner.accountId, {
      sessionId: session.id,
      floorId: floor.id,
      pageId: output.id,
    });
    expect(views.local).toEqual({ seen: true });
  });

  it('loads {local, global} views: local flattened page > floor > branch > chat, global apart', async () => {
    const h = await createVariableHosts(t, owner);
    await putVariableBatch(t, owner.apiKey, [
      { scope: 'page', scope_id: h.openPage.id, key: 'x', value: 'page' },
      { scope: 'floor', scope_id: h.openFloor.id, key: 'x', value: 'floor' },
      { scope: 'floor', scope_id: h.openFloor.id, key: 'y', value: 'floor' },
      { scope: 'branch', scope_id: h.branchScopeId, key: 'z', value: { b: 1 } },
      { scope: 'branch', scope_id: h.branchScopeId, key: 'y', value: 'branch' },
      { scope: 'chat', scope_id: h.sessionId, key: 'w', value: 'chat' },
      { scope: 'global', scope_id: 'global', key: 'views-global', value: 'g' },
      { scope: 'global', scope_id: 'global', key: 'w', value: 'global w' },
    ]).expect(200);
    const views = await loadVariableViews(db, owner.accountId, {
      sessionId: h.sessionId,
      branchId: h.branchId,
      floorId: h.openFloor.id,
      pageId: h.openPage.id,
    });
    expect(views.local).toEqual({ x: 'page', y: 'floor', z: { b: 1 }, w: 'chat' });
    expect(views.global).toMatchObject({ 'views-global': 'g', w: 'global w' });
    const branchOnly = await loadVariableViews(db, owner.accountId, {
      sessionId: h.sessionId,
      branchId: h.branchId,
    });
    expect(branchOnly.local).toEqual({ y: 'branch', z: { b: 1 }, w: 'chat' });
    await expect(loadVariableViews(db, other.accountId, { sessionId: h.sessionId })).rejects.toMatchObject({
      code: 'variable_host_not_found',
      status: 404,
    });
  });

  it('stores one local snapshot per floor, replaces it, and answers 409 branch_local_snapshot_missing without one', async () => {
    const h = await createVariableHosts(t, owner);
    expect(await loadFloorLocalSnapshot(db, owner.accountId, h.committedFloor.id)).toBeNull();
    const missing = await requireBranchLocalSnapshot(db, owner.accountId, h.committedFloor.id).catch(
      (e) => e,
    );
    expect(missing).toBeInstanceOf(DomainError);
    expect(missing).toMatchObject({
      code: 'branch_local_snapshot_missing',
      status: 409,
      details: { source_floor_id: h.committedFloor.id },
    });
    await inTransaction(db, ({ tx }) => snapshotLocalView(tx, h.committedFloor, { hp: 5, bag: { gold: 1 } }));
    expect(await requireBranchLocalSnapshot(db, owner.accountId, h.committedFloor.id)).toEqual({
      hp: 5,
      bag: { gold: 1 },
    });
    await inTransaction(db, ({ tx }) => snapshotLocalView(tx, h.committedFloor, { hp: 6 }));
    expect(await loadFloorLocalSnapshot(db, owner.accountId, h.committedFloor.id)).toEqual({ hp: 6 });
    await expect(requireBranchLocalSnapshot(db, other.accountId, h.committedFloor.id)).rejects.toMatchObject({
      code: 'branch_local_snapshot_missing',
    });
  });

  it('cleans variables, ledger, trace and snapshot with their floor; deleted ids stay deletable', async () => {
    const h = await createVariableHosts(t, owner);
    const written = await putVariableBatch(t, owner.apiKey, [
      { scope: 'floor', scope_id: h.openFloor.id, key: 'f', value: 1 },
      { scope: 'page', scope_id: h.openPage.id, key: 'p', value: 1 },
    ]).expect(200);
    await inTransaction(db, async ({ tx }) => {
      await stageMutations(tx, h.openPage, [set('s', 1)], evidence);
      await promoteStagedWrites(tx, h.openPage, h.openFloor);
      await snapshotLocalView(tx, h.openFloor, { s: 1 });
    });
    await deleteFloorRow(t, h.openFloor.id);
    expect(await floorVariables(h)).toEqual([]);
    expect(await pageVariables(h)).toEqual([]);
    expect(await ledger(h)).toEqual([]);
    expect(await variablesRepository.listPromotions(db, owner.accountId, h.openPage.id)).toEqual([]);
    expect(await loadFloorLocalSnapshot(db, owner.accountId, h.openFloor.id)).toBeNull();
    for (const r of written.body.data.results as Array<{ data: { id: string } }>) {
      const res = await t.http.delete(`/variables/${r.data.id}`).set('x-api-key', owner.apiKey);
      expect([res.status, res.body.data]).toEqual([200, { id: r.data.id, deleted: true }]);
    }
  });

  it('lets an account with variables be deleted (no tombstone is left behind)', async () => {
    const gone = await createAccountCaller(t, { name: 'Leaving' });
    const res = await putVariable(t, gone.apiKey, {
      scope: 'global',
      scope_id: 'global',
      key: 'k',
      value: 1,
    });
    expect(res.status).toBe(201);
    await inTransaction(db, ({ tx }) => accountsRepository.deleteAccount(tx, gone.accountId));
    expect(await variablesRepository.findById(db, gone.accountId, res.body.data.id)).toBeUndefined();
    expect(await variablesRepository.hasTombstone(db, gone.accountId, res.body.data.id)).toBe(false);
  });
});
