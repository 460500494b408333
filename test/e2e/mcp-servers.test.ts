import { operationLogsRepository } from '@hearth/persistence';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { createMcpServer } from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The Workspace MCP server registry (docs/decisions.md "Settings"): `{data}` envelope, limits, name
 * uniqueness, account-only writes, other accounts 404 `not_found`, operation logs, and DELETE refused
 * while an enabled Project binding references the server.
 */
describe('MCP servers', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let client: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other' });
    client = await createClientCaller(t, owner.accountId, 'Side client');
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, key = owner.apiKey) =>
    t.http
      .post('/mcp-servers')
      .set('x-api-key', key)
      .send(body as object);
  const logs = (accountId = owner.accountId) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId, filters: {} },
      { limit: 10000, offset: 0, sortOrder: 'asc' },
    );

  it('creates a server in the default Workspace with defaults, in {data}', async () => {
    const res = await post({ name: 'Search', url: 'https://mcp.example.com/sse' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      data: {
        id: expect.stringMatching(/^mcp_/),
        workspace_id: expect.any(String),
        name: 'Search',
        url: 'https://mcp.example.com/sse',
        status: 'enabled',
        tools: [],
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      },
    });
    const got = await t.http.get(`/mcp-servers/${res.body.data.id}`).set('x-api-key', owner.apiKey);
    expect(got.body).toEqual(res.body);
    const list = await t.http.get('/mcp-servers').set('x-api-key', owner.apiKey);
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(res.body.data.id);
    expect(list.body.meta).toEqual({ total: list.body.data.length });
    const log = (await logs()).find((l) => l.target_id === res.body.data.id);
    expect(log).toMatchObject({ action: 'mcp_server.create', target_type: 'mcp_server' });
  });

  it('takes names of 1 and 120 characters, refuses 0, 121 and blank', async () => {
    expect((await post({ name: 'a', url: 'http://x.example' })).status).toBe(201);
    expect((await post({ name: 'n'.repeat(120), url: 'http://x.example' })).status).toBe(201);
    for (const name of ['', 'n'.repeat(121), '   ']) {
      const res = await post({ name, url: 'http://x.example' });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    }
  });

  it('keeps names unique per Workspace (409 mcp_server_name_conflict), not across accounts', async () => {
    await createMcpServer(t, owner.apiKey, { name: 'Dup' });
    const res = await post({ name: 'Dup', url: 'https://x.example' });
    expect([res.status, res.body.error.code]).toEqual([409, 'mcp_server_name_conflict']);
    expect((await post({ name: 'Dup', url: 'https://x.example' }, other.apiKey)).status).toBe(201);
    const second = await createMcpServer(t, owner.apiKey, { name: 'Dup2' });
    const rename = await t.http
      .patch(`/mcp-servers/${second.id}`)
      .set('x-api-key', owner.apiKey)
      .send({ name: 'Dup' });
    expect([rename.status, rename.body.error.code]).toEqual([409, 'mcp_server_name_conflict']);
  });

  it.each([
    [{ url: 'ftp://x.example' }, 'url'],
    [{ url: 'not a url' }, 'url'],
    [{ tools: ['a', 'a'] }, 'tools'],
    [{ tools: [''] }, 'tools'],
    [{ status: 'on' }, 'status'],
    [{ extra: 1 }, 'extra'],
  ])('refuses %j with 400 validation_error', async (patch, field) => {
    const res = await post({ name: `bad-${field}-${Math.random()}`, url: 'https://x.example', ...patch });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('takes a catalog of 200 tools and refuses 201', async () => {
    const tools = Array.from({ length: 200 }, (_, i) => `t${i}`);
    expect((await post({ name: 'big', url: 'https://x.example', tools })).status).toBe(201);
    const res = await post({ name: 'too big', url: 'https://x.example', tools: [...tools, 'one more'] });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
  });

  it('patches fields, needs at least one, and a no-op writes nothing', async () => {
    const server = await createMcpServer(t, owner.apiKey, { tools: ['a'] });
    const res = await t.http
      .patch(`/mcp-servers/${server.id}`)
      .set('x-api-key', owner.apiKey)
      .send({ tools: ['a', 'b'], status: 'disabled', url: 'http://y.example' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ tools: ['a', 'b'], status: 'disabled', url: 'http://y.example' });
    const empty = await t.http.patch(`/mcp-servers/${server.id}`).set('x-api-key', owner.apiKey).send({});
    expect([empty.status, empty.body.error.code]).toEqual([400, 'validation_error']);
    const before = (await logs()).length;
    const same = await t.http
      .patch(`/mcp-servers/${server.id}`)
      .set('x-api-key', owner.apiKey)
      .send({ status: 'disabled' });
    expect(same.body.data).toEqual(res.body.data);
    expect((await logs()).length).toBe(before);
  });

  it('lets other Clients of the account read but not write (403 mcp_server_account_only)', async () => {
    const server = await createMcpServer(t, owner.apiKey);
    expect((await t.http.get(`/mcp-servers/${server.id}`).set('x-api-key', client.apiKey)).status).toBe(200);
    expect((await t.http.get('/mcp-servers').set('x-api-key', client.apiKey)).status).toBe(200);
    const writes = [
      await post({ name: 'by client', url: 'https://x.example' }, client.apiKey),
      await t.http
        .patch(`/mcp-servers/${server.id}`)
        .set('x-api-key', client.apiKey)
        .send({ status: 'disabled' }),
      await t.http.delete(`/mcp-servers/${server.id}`).set('x-api-key', client.apiKey),
    ];
    for (const res of writes)
      expect([res.status, res.body.error.code]).toEqual([403, 'mcp_server_account_only']);
  });

  it('answers 404 not_found for another account’s server on every route', async () => {
    const foreign = await createMcpServer(t, other.apiKey);
    const responses = [
      await t.http.get(`/mcp-servers/${foreign.id}`).set('x-api-key', owner.apiKey),
      await t.http
        .patch(`/mcp-servers/${foreign.id}`)
        .set('x-api-key', owner.apiKey)
        .send({ status: 'disabled' }),
      await t.http.delete(`/mcp-servers/${foreign.id}`).set('x-api-key', owner.apiKey),
      await t.http.get('/mcp-servers/mcp_missing').set('x-api-key', owner.apiKey),
    ];
    for (const res of responses) expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    const list = await t.http.get('/mcp-servers').set('x-api-key', owner.apiKey);
    expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(foreign.id);
  });

  it('refuses DELETE while an enabled binding references the server (409 mcp_server_in_use)', async () => {
    const server = await createMcpServer(t, owner.apiKey);
    const project = await createProject(t, { accountId: owner.accountId });
    const bind = (status: string) =>
      t.http
        .put(`/projects/${project.id}/settings/mcp-bindings`)
        .set('x-api-key', owner.apiKey)
        .send({ mcp_server_id: server.id, status });
    expect((await bind('enabled')).status).toBe(200);
    const refused = await t.http.delete(`/mcp-servers/${server.id}`).set('x-api-key', owner.apiKey);
    expect([refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
      409,
      'mcp_server_in_use',
      { binding_count: 1 },
    ]);
    expect((await t.http.get(`/mcp-servers/${server.id}`).set('x-api-key', owner.apiKey)).status).toBe(200);
    expect((await bind('disabled')).status).toBe(200);
    const deleted = await t.http.delete(`/mcp-servers/${server.id}`).set('x-api-key', owner.apiKey);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: { id: server.id, deleted: true } });
    expect((await t.http.get(`/mcp-servers/${server.id}`).set('x-api-key', owner.apiKey)).status).toBe(404);
    expect((await logs()).filter((l) => l.target_id === server.id).map((l) => l.action)).toEqual([
      'mcp_server.create',
      'mcp_server.delete',
    ]);
  });

  it('refuses unknown query parameters on the list', async () => {
    const res = await t.http.get('/mcp-servers?limit=5').set('x-api-key', owner.apiKey);
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
  });
});
