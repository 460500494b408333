import { createVariableHosts } from '../support/factories/variables';
import { defaultCaller } from '../support/factories/members';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/** Variables on the embedded adapters (PGlite): upsert, batch, resolve, cascade and the tombstone trigger. */
describe('variables in embedded mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('writes, resolves, deletes, and accepts ids cleaned with their session', async () => {
    const api = (method: 'get' | 'put' | 'delete', path: string) =>
      t.http[method](path).set('x-api-key', ADMIN_KEY);
    const hosts = await createVariableHosts(t, await defaultCaller(t, ADMIN_KEY));
    const created = await api('put', '/variables').send({
      scope: 'chat',
      scope_id: hosts.sessionId,
      key: 'x',
      value: { a: 1 },
    });
    expect(created.status).toBe(201);
    expect(
      (await api('put', '/variables').send({ scope: 'chat', scope_id: hosts.sessionId, key: 'x', value: 2 }))
        .status,
    ).toBe(200);
    const batch = await api('put', '/variables/batch').send({
      items: [
        { scope: 'branch', scope_id: hosts.branchScopeId, key: 'x', value: 'branch' },
        { scope: 'global', scope_id: 'global', key: 'g', value: true },
      ],
    });
    expect(batch.body.data.meta).toEqual({ total: 2, created: 2, updated: 0 });
    const resolved = await api(
      'get',
      `/variables/resolve?session_id=${hosts.sessionId}&branch_id=${hosts.branchId}`,
    );
    expect(resolved.body.data.resolved.map((r: { key: string; value: unknown }) => [r.key, r.value])).toEqual(
      [
        ['g', true],
        ['x', 'branch'],
      ],
    );
    const locked = await api('put', '/variables').send({
      scope: 'floor',
      scope_id: hosts.committedFloor.id,
      key: 'k',
      value: 1,
    });
    expect([locked.status, locked.body.error.code]).toEqual([409, 'variable_target_locked']);
    const id = created.body.data.id as string;
    expect((await api('delete', `/sessions/${hosts.sessionId}`)).status).toBe(200);
    expect((await api('get', `/variables/${id}`)).status).toBe(404);
    const orphan = await api('delete', `/variables/${id}`);
    expect([orphan.status, orphan.body.data]).toEqual([200, { id, deleted: true }]);
    expect((await api('delete', '/variables/var_never')).status).toBe(404);
  });
});
