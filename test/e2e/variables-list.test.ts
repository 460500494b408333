import { createAccountCaller, type Caller } from '../support/factories/members';
import { createVariableHosts, putVariableBatch, type VariableHosts } from '../support/factories/variables';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

interface VariableJson {
  id: string;
  scope: string;
  scope_id: string;
  key: string;
  value: unknown;
  updated_at: number;
}

/** `GET /variables` (spec 2 "List query"): filters, paging, sorting, meta, isolation. */
describe('Variables: list', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let hosts: VariableHosts;
  let second: VariableHosts;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Lister' });
    other = await createAccountCaller(t, { name: 'Other' });
    hosts = await createVariableHosts(t, owner);
    second = await createVariableHosts(t, owner);
    // 55 chat variables written one batch at a time so updated_at grows with the key number.
    for (let i = 0; i < 55; i++) {
      await putVariableBatch(t, owner.apiKey, [
        { scope: 'chat', scope_id: hosts.sessionId, key: `k${String(i).padStart(2, '0')}`, value: i },
      ]);
    }
    await putVariableBatch(t, owner.apiKey, [
      { scope: 'global', scope_id: 'global', key: 'g', value: 'global' },
      { scope: 'branch', scope_id: hosts.branchScopeId, key: 'b1', value: 1 },
      { scope: 'branch', scope_id: second.branchScopeId, key: 'b2', value: 2 },
      { scope: 'floor', scope_id: hosts.openFloor.id, key: 'f', value: 'f' },
      { scope: 'page', scope_id: hosts.openPage.id, key: 'p', value: 'p' },
    ]);
    const foreign = await createVariableHosts(t, other);
    await putVariableBatch(t, other.apiKey, [
      { scope: 'global', scope_id: 'global', key: 'g', value: 'foreign' },
      { scope: 'branch', scope_id: foreign.branchScopeId, key: 'b1', value: 'foreign' },
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  const list = (query: string, caller = owner) =>
    t.http.get(`/variables${query ? `?${query}` : ''}`).set('x-api-key', caller.apiKey);

  it('lists the account only, newest first, 50 by default, with meta', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({
      total: 60,
      limit: 50,
      offset: 0,
      has_more: true,
      sort_by: 'updated_at',
      sort_order: 'desc',
    });
    const items = res.body.data as VariableJson[];
    expect(items).toHaveLength(50);
    expect(items.every((v) => v.value !== 'foreign')).toBe(true);
    const times = items.map((v) => v.updated_at);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const rest = await list('offset=50');
    expect(rest.body.meta).toMatchObject({ total: 60, offset: 50, has_more: false });
    expect(rest.body.data).toHaveLength(10);
    const ids = new Set([...items, ...(rest.body.data as VariableJson[])].map((v) => v.id));
    expect(ids.size).toBe(60);
  });

  it('filters by scope and scope_id, normalising a global scope_id', async () => {
    const chat = await list(`scope=chat&scope_id=${hosts.sessionId}&limit=200`);
    expect(chat.body.meta.total).toBe(55);
    const global = await list('scope=global&scope_id=anything');
    expect((global.body.data as VariableJson[]).map((v) => [v.key, v.value])).toEqual([['g', 'global']]);
    const floor = await list(`scope=floor`);
    expect((floor.body.data as VariableJson[]).map((v) => v.scope_id)).toEqual([hosts.openFloor.id]);
    const page = await list(`scope_id=${hosts.openPage.id}`);
    expect((page.body.data as VariableJson[]).map((v) => v.key)).toEqual(['p']);
  });

  it('lists every branch variable of the account with scope=branch, and filters by session and branch', async () => {
    const all = await list('scope=branch&sort_by=key&sort_order=asc');
    expect((all.body.data as VariableJson[]).map((v) => v.key)).toEqual(['b1', 'b2']);
    const bySession = await list(`scope=branch&session_id=${second.sessionId}`);
    expect((bySession.body.data as VariableJson[]).map((v) => v.key)).toEqual(['b2']);
    const byBranch = await list(`scope=branch&branch_id=${hosts.branchId}`);
    expect((byBranch.body.data as VariableJson[]).map((v) => v.key)).toEqual(['b1']);
    const both = await list(`scope=branch&session_id=${hosts.sessionId}&branch_id=${second.branchId}`);
    expect(both.body.data).toEqual([]);
  });

  it('refuses session_id or branch_id without scope=branch with 400 variable_context_invalid', async () => {
    for (const query of [`session_id=${hosts.sessionId}`, `scope=chat&branch_id=${hosts.branchId}`]) {
      const res = await list(query);
      expect([res.status, res.body.error.code]).toEqual([400, 'variable_context_invalid']);
    }
  });

  it('filters by exact key', async () => {
    const res = await list('key=k07');
    expect((res.body.data as VariableJson[]).map((v) => v.value)).toEqual([7]);
    expect((await list('key=k0')).body.data).toEqual([]);
  });

  it('sorts by key in both directions', async () => {
    const asc = await list(`scope=chat&sort_by=key&sort_order=asc&limit=3`);
    expect((asc.body.data as VariableJson[]).map((v) => v.key)).toEqual(['k00', 'k01', 'k02']);
    expect(asc.body.meta).toMatchObject({ sort_by: 'key', sort_order: 'asc', limit: 3, has_more: true });
    const desc = await list(`scope=chat&sort_by=key&limit=2`);
    expect((desc.body.data as VariableJson[]).map((v) => v.key)).toEqual(['k54', 'k53']);
    const oldest = await list(`scope=chat&sort_order=asc&limit=1`);
    expect((oldest.body.data as VariableJson[])[0].key).toBe('k00');
  });

  it('takes limit 1-200 and offset from 0; refuses anything else with 400 validation_error', async () => {
    expect((await list('limit=200')).body.data).toHaveLength(60);
    expect((await list('limit=1')).body.data).toHaveLength(1);
    for (const query of [
      'limit=201',
      'limit=0',
      'offset=-1',
      'sort_by=name',
      'sort_order=up',
      'scope=none',
      'x=1',
    ]) {
      const res = await list(query);
      expect([query, res.status, res.body.error.code]).toEqual([query, 400, 'validation_error']);
    }
  });

  it('documents every variable route in /openapi.json', async () => {
    const res = await t.http.get('/openapi.json');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/variables',
        '/variables/batch',
        '/variables/resolve',
        '/variables/{id}',
        '/pages/{pageId}/variables/staged',
        '/pages/{pageId}/variables/promotions',
      ]),
    );
  });

  it("never lists another account's variables", async () => {
    const res = await list('scope=branch', other);
    expect((res.body.data as VariableJson[]).map((v) => v.value)).toEqual(['foreign']);
    expect(res.body.meta.total).toBe(1);
  });
});
