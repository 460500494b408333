import { promoteStagedWrites, stageMutations } from '@hearth/app';
import { inTransaction } from '@hearth/persistence';
import { appendTurns } from '../support/factories/conversation';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import {
  createBranchRow,
  createVariableHosts,
  putVariableBatch,
  type VariableHosts,
} from '../support/factories/variables';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * `GET /variables/resolve` (priority page > floor > branch > chat > global, context checks, layers) and
 * the read-only page ledger routes `GET /pages/:pageId/variables/staged|promotions`.
 */
describe('Variables: resolve and the page ledger', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let hosts: VariableHosts;
  let otherHosts: VariableHosts;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Resolver' });
    other = await createAccountCaller(t, { name: 'Other' });
    hosts = await createVariableHosts(t, owner);
    otherHosts = await createVariableHosts(t, other);
    const at = (scope: string, scopeId: string, entries: Record<string, unknown>) =>
      Object.entries(entries).map(([key, value]) => ({ scope, scope_id: scopeId, key, value }));
    const res = await putVariableBatch(t, owner.apiKey, [
      ...at('page', hosts.openPage.id, { x: 'page', only_page: { p: 1 } }),
      ...at('floor', hosts.openFloor.id, { x: 'floor', y: 'floor', only_floor: 1 }),
      ...at('branch', hosts.branchScopeId, { x: 'branch', y: 'branch', z: 'branch', only_branch: true }),
      ...at('chat', hosts.sessionId, { x: 'chat', y: 'chat', z: 'chat', w: 'chat', only_chat: null }),
      ...at('global', 'global', {
        x: 'global',
        y: 'global',
        z: 'global',
        w: 'global',
        v: 'global',
        A: 'upper',
      }),
    ]);
    expect(res.status).toBe(200);
    await putVariableBatch(t, other.apiKey, [
      { scope: 'global', scope_id: 'global', key: 'x', value: 'foreign' },
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  const resolve = (query: Record<string, string>, caller = owner) =>
    t.http.get(`/variables/resolve?${new URLSearchParams(query).toString()}`).set('x-api-key', caller.apiKey);
  const pick = (body: { data: { resolved: Array<{ key: string; value: unknown; source_scope: string }> } }) =>
    Object.fromEntries(body.data.resolved.map((r) => [r.key, [r.value, r.source_scope]]));

  it('resolves every key from the highest scope holding it, sorted by key, with its source', async () => {
    const res = await resolve({ session_id: hosts.sessionId, page_id: hosts.openPage.id });
    expect(res.status).toBe(200);
    expect(res.body.data.context).toEqual({
      account_id: owner.accountId,
      session_id: hosts.sessionId,
      branch_id: hosts.branchId,
      floor_id: hosts.openFloor.id,
      page_id: hosts.openPage.id,
      global_scope_id: 'global',
    });
    expect(res.body.data.layers).toBeUndefined();
    const keys = res.body.data.resolved.map((r: { key: string }) => r.key);
    expect(keys).toEqual([...keys].sort());
    expect(keys[0]).toBe('A');
    expect(pick(res.body)).toEqual({
      A: ['upper', 'global'],
      only_branch: [true, 'branch'],
      only_chat: [null, 'chat'],
      only_floor: [1, 'floor'],
      only_page: [{ p: 1 }, 'page'],
      v: ['global', 'global'],
      w: ['chat', 'chat'],
      x: ['page', 'page'],
      y: ['floor', 'floor'],
      z: ['branch', 'branch'],
    });
    const z = res.body.data.resolved.find((r: { key: string }) => r.key === 'z');
    expect(z).toEqual({
      key: 'z',
      value: 'branch',
      source_scope: 'branch',
      source_scope_id: hosts.branchScopeId,
      source_scope_ref: { session_id: hosts.sessionId, branch_id: hosts.branchId },
      updated_at: expect.any(Number),
    });
    const x = res.body.data.resolved.find((r: { key: string }) => r.key === 'x');
    expect(x).toMatchObject({ source_scope_id: hosts.openPage.id, source_scope_ref: null });
  });

  it('drops the layers a context does not reach', async () => {
    const floor = await resolve({ session_id: hosts.sessionId, floor_id: hosts.openFloor.id });
    expect(floor.body.data.context).toMatchObject({ branch_id: hosts.branchId, page_id: null });
    expect(pick(floor.body).x).toEqual(['floor', 'floor']);
    expect(pick(floor.body).only_page).toBeUndefined();
    const branch = await resolve({ session_id: hosts.sessionId, branch_id: hosts.branchId });
    expect(branch.body.data.context).toMatchObject({ floor_id: null, page_id: null });
    expect(pick(branch.body).x).toEqual(['branch', 'branch']);
    const chat = await resolve({ session_id: hosts.sessionId });
    expect(chat.body.data.context).toMatchObject({ branch_id: null, floor_id: null, page_id: null });
    expect(pick(chat.body).x).toEqual(['chat', 'chat']);
    expect(pick(chat.body).only_branch).toBeUndefined();
    const bare = await resolve({ session_id: otherHosts.sessionId }, other);
    expect(pick(bare.body)).toEqual({ x: ['foreign', 'global'] });
  });

  it('returns every layer, high to low, with include_layers=true', async () => {
    const res = await resolve({
      session_id: hosts.sessionId,
      page_id: hosts.openPage.id,
      include_layers: 'true',
    });
    const layers = res.body.data.layers as Array<{
      scope: string;
      scope_id: string;
      scope_ref: unknown;
      items: Array<{ key: string; value: unknown; id: string }>;
    }>;
    expect(layers.map((l) => [l.scope, l.scope_id])).toEqual([
      ['page', hosts.openPage.id],
      ['floor', hosts.openFloor.id],
      ['branch', hosts.branchScopeId],
      ['chat', hosts.sessionId],
      ['global', 'global'],
    ]);
    expect(layers[2].scope_ref).toEqual({ session_id: hosts.sessionId, branch_id: hosts.branchId });
    expect(layers[0].items.map((i) => i.key)).toEqual(['only_page', 'x']);
    expect(layers[4].items.map((i) => [i.key, i.value])).toEqual([
      ['A', 'upper'],
      ['v', 'global'],
      ['w', 'global'],
      ['x', 'global'],
      ['y', 'global'],
      ['z', 'global'],
    ]);
    const empty = await resolve(
      { session_id: otherHosts.sessionId, branch_id: otherHosts.branchId, include_layers: 'true' },
      other,
    );
    expect(empty.body.data.layers.map((l: { items: unknown[] }) => l.items.length)).toEqual([0, 0, 1]);
    const off = await resolve({ session_id: hosts.sessionId, include_layers: 'false' });
    expect(off.body.data.layers).toBeUndefined();
    // 1 and 0, as every boolean query of the API reads them.
    const one = await resolve({ session_id: hosts.sessionId, include_layers: '1' });
    expect(one.status).toBe(200);
    expect(Array.isArray(one.body.data.layers)).toBe(true);
    expect(
      (await resolve({ session_id: hosts.sessionId, include_layers: '0' })).body.data.layers,
    ).toBeUndefined();
  });

  it('accepts an explicit branch_id that agrees: the floor’s branch or a branch whose history holds it', async () => {
    const chat = await t.http.post('/sessions').set('x-api-key', owner.apiKey).send({}).expect(201);
    const chatSession = { id: chat.body.data.id as string, account_id: owner.accountId };
    const floors = await appendTurns(t, chatSession, 3);
    const branch = (
      await t.http.post(`/floors/${floors[1].id}/branch`).set('x-api-key', owner.apiKey).send({}).expect(201)
    ).body.data;
    const inHistory = await resolve({
      session_id: chatSession.id,
      floor_id: floors[0].id,
      branch_id: branch.branch_id,
    });
    expect(inHistory.status).toBe(200);
    expect(inHistory.body.data.context).toMatchObject({
      branch_id: branch.branch_id,
      floor_id: floors[0].id,
    });
    const own = await resolve({
      session_id: chatSession.id,
      floor_id: floors[2].id,
      branch_id: floors[2].branch_id,
    });
    expect(own.status).toBe(200);
    const notInHistory = await resolve({
      session_id: chatSession.id,
      floor_id: floors[2].id,
      branch_id: branch.branch_id,
    });
    expect([notInHistory.status, notInHistory.body.error.code]).toEqual([400, 'variable_context_invalid']);
  });

  it.each([
    ['a page of another session', () => ({ session_id: hosts.sessionId, page_id: '$secondPage' })],
    ['a floor of another session', () => ({ session_id: hosts.sessionId, floor_id: '$secondFloor' })],
    ['a branch of another session', () => ({ session_id: hosts.sessionId, branch_id: '$secondBranch' })],
    [
      'a floor_id that is not the page’s floor',
      () => ({ session_id: hosts.sessionId, page_id: hosts.openPage.id, floor_id: hosts.committedFloor.id }),
    ],
    [
      'a branch_id that disagrees with the floor',
      () => ({
        session_id: hosts.sessionId,
        floor_id: hosts.openFloor.id,
        branch_id: '$secondBranchOfSession',
      }),
    ],
  ])('refuses %s with 400 variable_context_invalid', async (_label, query) => {
    const second = await createVariableHosts(t, owner);
    const extra = await createBranchRow(t, { id: hosts.sessionId, account_id: owner.accountId });
    const substitute: Record<string, string> = {
      $secondPage: second.openPage.id,
      $secondFloor: second.openFloor.id,
      $secondBranch: second.branchId,
      $secondBranchOfSession: extra,
    };
    const q = Object.fromEntries(Object.entries(query()).map(([k, v]) => [k, substitute[v] ?? v]));
    const res = await resolve(q);
    expect([res.status, res.body.error.code]).toEqual([400, 'variable_context_invalid']);
  });

  it.each([
    ['an unknown session', () => ({ session_id: 'ses_missing' })],
    ['another account’s session', () => ({ session_id: otherHosts.sessionId })],
    ['an unknown branch', () => ({ session_id: hosts.sessionId, branch_id: 'br_missing' })],
    ['another account’s branch', () => ({ session_id: hosts.sessionId, branch_id: otherHosts.branchId })],
    ['an unknown floor', () => ({ session_id: hosts.sessionId, floor_id: 'flr_missing' })],
    ['another account’s floor', () => ({ session_id: hosts.sessionId, floor_id: otherHosts.openFloor.id })],
    ['an unknown page', () => ({ session_id: hosts.sessionId, page_id: 'pg_missing' })],
    ['another account’s page', () => ({ session_id: hosts.sessionId, page_id: otherHosts.openPage.id })],
  ])('answers 404 variable_host_not_found for %s', async (_label, query) => {
    const res = await resolve(query());
    expect([res.status, res.body.error.code]).toEqual([404, 'variable_host_not_found']);
    expect(JSON.stringify(res.body)).not.toContain('foreign');
  });

  it('refuses a missing session_id or a bad include_layers with 400 validation_error', async () => {
    for (const query of [
      {},
      { session_id: hosts.sessionId, include_layers: 'yes' },
      { session_id: hosts.sessionId, other: '1' },
    ]) {
      const res = await resolve(query as Record<string, string>);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    }
  });

  it('serves the page ledger and promotion trace read-only, to every Client of the account', async () => {
    const db = t.resources.database.db;
    const side = await createClientCaller(t, owner.accountId, 'Ledger reader');
    const fresh = await createVariableHosts(t, owner);
    await inTransaction(db, async ({ tx }) => {
      await stageMutations(
        tx,
        fresh.openPage,
        [
          { scope: 'local', key: 'hp', name: 'hp', op: 'set', after: 10, deleted: false, macro: 'setvar' },
          {
            scope: 'global',
            key: 'g',
            name: 'g',
            op: 'set',
            after: 1,
            deleted: false,
            macro: 'setglobalvar',
          },
          {
            scope: 'local',
            key: 'bag',
            name: 'bag.gold',
            op: 'set',
            after: '{"gold":5}',
            deleted: false,
            macro: 'setvar',
          },
        ],
        { runId: 'run_1', generationAttemptNo: 1 },
        { finalValues: { hp: 10, bag: { gold: 5 } } },
      );
    });
    const staged = await t.http
      .get(`/pages/${fresh.openPage.id}/variables/staged`)
      .set('x-api-key', side.apiKey);
    expect(staged.status).toBe(200);
    expect(staged.body.data).toMatchObject({
      page_id: fresh.openPage.id,
      floor_id: fresh.openFloor.id,
      session_id: fresh.sessionId,
      branch_id: fresh.branchId,
    });
    expect(staged.body.data.items).toEqual([
      {
        id: expect.stringMatching(/^vsw_/),
        key: 'hp',
        op: 'set',
        value: 10,
        intent: 'promote_to_floor_on_accept',
        conflict_policy: 'replace',
        reason: 'setvar',
        source: { toolName: 'setvar', providerId: null },
        evidence: { runId: 'run_1', generationAttemptNo: 1 },
        status: 'staged',
        decision_reason: null,
        created_at: expect.any(Number),
        resolved_at: null,
      },
      expect.objectContaining({
        key: 'bag',
        value: { gold: 5 },
        reason: 'setvar bag.gold',
        status: 'staged',
      }),
    ]);
    const beforePromotion = await t.http
      .get(`/pages/${fresh.openPage.id}/variables/promotions`)
      .set('x-api-key', owner.apiKey);
    expect(beforePromotion.body.data.items).toEqual([]);
    // Staged writes are not durable values: resolve does not see them.
    const unresolved = await resolve({ session_id: fresh.sessionId, page_id: fresh.openPage.id });
    const local = (r: { source_scope: string }) => r.source_scope !== 'global';
    expect(unresolved.body.data.resolved.filter(local)).toEqual([]);

    await inTransaction(db, ({ tx }) => promoteStagedWrites(tx, fresh.openPage, fresh.openFloor));
    const promotions = await t.http
      .get(`/pages/${fresh.openPage.id}/variables/promotions`)
      .set('x-api-key', owner.apiKey);
    expect(promotions.status).toBe(200);
    expect(promotions.body.data).toMatchObject({ page_id: fresh.openPage.id, branch_id: fresh.branchId });
    const ledger = staged.body.data.items as Array<{ id: string }>;
    expect(promotions.body.data.items).toEqual([
      {
        id: expect.stringMatching(/^vprm_/),
        staged_write_id: ledger[0].id,
        key: 'hp',
        from_scope: 'page',
        from_scope_id: fresh.openPage.id,
        to_scope: 'floor',
        to_scope_id: fresh.openFloor.id,
        conflict_policy: 'replace',
        source_variable_id: expect.stringMatching(/^var_/),
        target_variable_id: expect.stringMatching(/^var_/),
        value: 10,
        created_at: expect.any(Number),
      },
      expect.objectContaining({ staged_write_id: ledger[1].id, key: 'bag', value: { gold: 5 } }),
    ]);
    const after = await t.http
      .get(`/pages/${fresh.openPage.id}/variables/staged`)
      .set('x-api-key', owner.apiKey);
    expect(after.body.data.items.map((i: { status: string }) => i.status)).toEqual(['promoted', 'promoted']);
    const resolved = await resolve({
      session_id: fresh.sessionId,
      page_id: fresh.openPage.id,
      include_layers: 'true',
    });
    expect(pick({ data: { resolved: resolved.body.data.resolved.filter(local) } })).toEqual({
      bag: [{ gold: 5 }, 'page'],
      hp: [10, 'page'],
    });
    expect(resolved.body.data.layers[1].items.map((i: { key: string }) => i.key)).toEqual(['bag', 'hp']);
  });

  it("answers 404 page_not_found for an unknown page and another account's page", async () => {
    for (const path of ['staged', 'promotions']) {
      for (const [pageId, caller] of [
        ['pg_missing', owner],
        [hosts.openPage.id, other],
        [otherHosts.openPage.id, owner],
      ] as const) {
        const res = await t.http.get(`/pages/${pageId}/variables/${path}`).set('x-api-key', caller.apiKey);
        expect([path, res.status, res.body.error.code]).toEqual([path, 404, 'page_not_found']);
      }
    }
  });
});
