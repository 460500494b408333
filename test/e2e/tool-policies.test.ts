import { operationLogsRepository } from '@hearth/persistence';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { createToolPolicy } from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The Workspace tool policy registry (docs/decisions.md "Settings"): `{data}` envelope, the
 * policy_json shape, name uniqueness, account-only writes, other accounts 404 `not_found`, logs, and
 * DELETE refused while an active Project override references the policy.
 */
describe('Tool policies', () => {
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
      .post('/tool-policies')
      .set('x-api-key', key)
      .send(body as object);
  const logs = () =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId: owner.accountId, filters: {} },
      { limit: 10000, offset: 0, sortOrder: 'asc' },
    );

  it('creates a policy with status active by default, in {data}', async () => {
    const res = await post({ name: 'No shell', policy_json: { mode: 'deny', tools: ['shell'] } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      data: {
        id: expect.stringMatching(/^tpol_/),
        workspace_id: expect.any(String),
        name: 'No shell',
        policy_json: { mode: 'deny', tools: ['shell'] },
        status: 'active',
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      },
    });
    expect(
      (await t.http.get(`/tool-policies/${res.body.data.id}`).set('x-api-key', owner.apiKey)).body,
    ).toEqual(res.body);
    const list = await t.http.get('/tool-policies').set('x-api-key', owner.apiKey);
    expect(list.body.data.map((p: { id: string }) => p.id)).toContain(res.body.data.id);
    expect(list.body.meta).toEqual({ total: list.body.data.length });
    expect((await logs()).find((l) => l.target_id === res.body.data.id)?.action).toBe('tool_policy.create');
  });

  it.each([
    [{ policy_json: { mode: 'allow' } }, 'policy_json.tools'],
    [{ policy_json: { tools: [] } }, 'policy_json.mode'],
    [{ policy_json: { mode: 'allow', tools: ['a', 'a'] } }, 'policy_json.tools'],
    [{ policy_json: { mode: 'allow', tools: [], when: 'always' } }, 'policy_json.when'],
    [{ policy_json: [] }, 'policy_json'],
    [{ policy_json: { mode: 'allow', tools: [] }, status: 'deleted' }, 'status'],
    [{ name: '', policy_json: { mode: 'allow', tools: [] } }, 'name'],
    [{ name: 'x'.repeat(121), policy_json: { mode: 'allow', tools: [] } }, 'name'],
  ])('refuses %j with 400 validation_error naming %s', async (body, field) => {
    const res = await post({ name: `p-${Math.random()}`, ...body });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('takes 200 tools and a 120-character name, refuses 201 tools', async () => {
    const tools = Array.from({ length: 200 }, (_, i) => `t${i}`);
    expect((await post({ name: 'x'.repeat(120), policy_json: { mode: 'allow', tools } })).status).toBe(201);
    const res = await post({ name: 'too many', policy_json: { mode: 'allow', tools: [...tools, 'extra'] } });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
  });

  it('keeps names unique per Workspace (409 tool_policy_name_conflict)', async () => {
    await createToolPolicy(t, owner.apiKey, { name: 'Same' });
    const res = await post({ name: 'Same', policy_json: { mode: 'allow', tools: [] } });
    expect([res.status, res.body.error.code]).toEqual([409, 'tool_policy_name_conflict']);
    expect(
      (await post({ name: 'Same', policy_json: { mode: 'allow', tools: [] } }, other.apiKey)).status,
    ).toBe(201);
  });

  it('patches, needs at least one field, writes nothing on a no-op', async () => {
    const policy = await createToolPolicy(t, owner.apiKey);
    const res = await t.http
      .patch(`/tool-policies/${policy.id}`)
      .set('x-api-key', owner.apiKey)
      .send({ policy_json: { mode: 'allow', tools: ['read'] }, status: 'archived' });
    expect(res.body.data).toMatchObject({
      policy_json: { mode: 'allow', tools: ['read'] },
      status: 'archived',
    });
    const empty = await t.http.patch(`/tool-policies/${policy.id}`).set('x-api-key', owner.apiKey).send({});
    expect([empty.status, empty.body.error.code]).toEqual([400, 'validation_error']);
    const before = (await logs()).length;
    const same = await t.http
      .patch(`/tool-policies/${policy.id}`)
      .set('x-api-key', owner.apiKey)
      .send({ policy_json: { tools: ['read'], mode: 'allow' } });
    expect(same.body.data).toEqual(res.body.data);
    expect((await logs()).length).toBe(before);
  });

  it('lets other Clients read but not write (403 tool_policy_account_only)', async () => {
    const policy = await createToolPolicy(t, owner.apiKey);
    expect((await t.http.get(`/tool-policies/${policy.id}`).set('x-api-key', client.apiKey)).status).toBe(
      200,
    );
    const writes = [
      await post({ name: 'by client', policy_json: { mode: 'allow', tools: [] } }, client.apiKey),
      await t.http
        .patch(`/tool-policies/${policy.id}`)
        .set('x-api-key', client.apiKey)
        .send({ status: 'archived' }),
      await t.http.delete(`/tool-policies/${policy.id}`).set('x-api-key', client.apiKey),
    ];
    for (const res of writes)
      expect([res.status, res.body.error.code]).toEqual([403, 'tool_policy_account_only']);
  });

  it('answers 404 not_found for another account’s policy on every route', async () => {
    const foreign = await createToolPolicy(t, other.apiKey);
    const responses = [
      await t.http.get(`/tool-policies/${foreign.id}`).set('x-api-key', owner.apiKey),
      await t.http
        .patch(`/tool-policies/${foreign.id}`)
        .set('x-api-key', owner.apiKey)
        .send({ status: 'archived' }),
      await t.http.delete(`/tool-policies/${foreign.id}`).set('x-api-key', owner.apiKey),
    ];
    for (const res of responses) expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
  });

  it('refuses DELETE while an active override references the policy (409 tool_policy_in_use)', async () => {
    const policy = await createToolPolicy(t, owner.apiKey);
    const project = await createProject(t, { accountId: owner.accountId });
    const override = (status: string) =>
      t.http
        .put(`/projects/${project.id}/settings/tool-policy-overrides`)
        .set('x-api-key', owner.apiKey)
        .send({ base_policy_id: policy.id, status });
    expect((await override('active')).status).toBe(200);
    const refused = await t.http.delete(`/tool-policies/${policy.id}`).set('x-api-key', owner.apiKey);
    expect([refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
      409,
      'tool_policy_in_use',
      { override_count: 1 },
    ]);
    expect((await override('archived')).status).toBe(200);
    const deleted = await t.http.delete(`/tool-policies/${policy.id}`).set('x-api-key', owner.apiKey);
    expect(deleted.body).toEqual({ data: { id: policy.id, deleted: true } });
    expect((await logs()).filter((l) => l.target_id === policy.id).map((l) => l.action)).toEqual([
      'tool_policy.create',
      'tool_policy.delete',
    ]);
  });
});
