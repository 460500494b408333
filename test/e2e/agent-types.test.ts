import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import {
  createLlmProfile,
  createMcpServer,
  createToolPolicy,
  setLlmProfileStatus,
} from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  agentState,
  createAgentType,
  createBinding,
  createExtraWorkspace,
  defaultWorkspace,
  logsOf,
  outcome,
  type Json,
} from './agents-support';

/**
 * Spec 1 "Agent Types": create, list, read, PATCH, disable and enable a Workspace's templates, with
 * their limits (key 120, name 200), the key conflict, the disable rule (409 `agent_type_in_use`),
 * normalised defaults and their operation logs. A refused request writes nothing.
 */
describe('Agent Types', () => {
  let t: TestApp;
  let alice: Caller;
  let ws: string;
  const base = () => `/workspaces/${ws}/agent-types`;
  const post = (body: Json) => t.http.post(base()).set('x-api-key', alice.apiKey).send(body);
  const patch = (id: string, body: Json) =>
    t.http.patch(`${base()}/${id}`).set('x-api-key', alice.apiKey).send(body);
  const action = (id: string, verb: 'disable' | 'enable') =>
    t.http.post(`${base()}/${id}/${verb}`).set('x-api-key', alice.apiKey);

  /** The request must be refused with `expected` and leave every agent row and log as it was. */
  async function refused(send: () => PromiseLike<{ status: number; body: Json }>, expected: string) {
    const before = await agentState(t);
    const res = await send();
    expect(outcome(res)).toBe(expected);
    expect(await agentState(t)).toEqual(before);
    return res;
  }

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    ws = (await defaultWorkspace(t, alice.accountId)).id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a type: 201, active, defaults normalised with every field present, logged', async () => {
    const res = await post({
      key: 'summariser',
      name: 'Summariser',
      scope_kind: 'project',
      defaults: {
        event_subscriptions: [{ type: 'floor.committed' }],
        grants: { allowed_output_targets: ['derived_output', 'derived_output'] },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^agt_/),
      workspace_id: ws,
      account_id: alice.accountId,
      key: 'summariser',
      name: 'Summariser',
      scope_kind: 'project',
      status: 'active',
      defaults: {
        llm_profile_id: null,
        tool_policy_id: null,
        mcp_bindings: [],
        event_subscriptions: [{ type: 'floor.committed', filter_json: null }],
        grants: { allowed_output_targets: ['derived_output'] },
        metadata: {},
      },
      created_at: expect.any(Number),
      updated_at: res.body.created_at,
    });
    const logs = await logsOf(t, alice.accountId, 'agent_type.create', res.body.id);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      workspace_id: ws,
      project_id: null,
      target_type: 'agent_type',
      actor_account_id: alice.accountId,
      after_ref: expect.objectContaining({ key: 'summariser', status: 'active' }),
    });
    const detail = await t.http.get(`${base()}/${res.body.id}`).set('x-api-key', alice.apiKey);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(res.body);
  });

  it('lists the Workspace’s types in creation order, without wrapper', async () => {
    const own = await createAccountCaller(t, { name: 'Lister' });
    const ownWs = (await defaultWorkspace(t, own.accountId)).id;
    const empty = await t.http.get(`/workspaces/${ownWs}/agent-types`).set('x-api-key', own.apiKey);
    expect([empty.status, empty.body]).toEqual([200, { items: [] }]);
    const a = await createAgentType(t, own.apiKey, ownWs, { key: 'b-first' });
    const b = await createAgentType(t, own.apiKey, ownWs, { key: 'a-second' });
    const list = await t.http.get(`/workspaces/${ownWs}/agent-types`).set('x-api-key', own.apiKey);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [a, b] });
  });

  it('key limits: 120 characters accepted, 121 refused; empty refused', async () => {
    const ok = await post({ key: 'k'.repeat(120), name: 'Long key', scope_kind: 'floor' });
    expect(ok.status).toBe(201);
    expect(ok.body.key).toHaveLength(120);
    const res = await refused(
      () => post({ key: 'k'.repeat(121), name: 'x', scope_kind: 'floor' }),
      '400 validation_error',
    );
    expect(res.body.error.details.fields.map((f: Json) => f.field)).toEqual(['key']);
    await refused(() => post({ key: '', name: 'x', scope_kind: 'floor' }), '400 validation_error');
  });

  it('name limits: 200 characters accepted, 201 refused', async () => {
    const ok = await post({ key: 'long-name', name: 'n'.repeat(200), scope_kind: 'session' });
    expect([ok.status, ok.body.name.length]).toEqual([201, 200]);
    await refused(
      () => post({ key: 'longer-name', name: 'n'.repeat(201), scope_kind: 'session' }),
      '400 validation_error',
    );
    await refused(() => post({ key: 'no-name', name: '', scope_kind: 'session' }), '400 validation_error');
  });

  it.each([
    ['key missing', { name: 'x', scope_kind: 'project' }],
    ['name missing', { key: 'x1', scope_kind: 'project' }],
    ['scope_kind missing', { key: 'x2', name: 'x' }],
    ['scope_kind unknown', { key: 'x3', name: 'x', scope_kind: 'galaxy' }],
    ['an unknown field', { key: 'x4', name: 'x', scope_kind: 'project', status: 'disabled' }],
    ['defaults not an object', { key: 'x5', name: 'x', scope_kind: 'project', defaults: [1] }],
    ['an unknown defaults field', { key: 'x6', name: 'x', scope_kind: 'project', defaults: { extra: 1 } }],
    [
      'an unknown output target',
      {
        key: 'x7',
        name: 'x',
        scope_kind: 'project',
        defaults: { grants: { allowed_output_targets: ['moon'] } },
      },
    ],
    ['a NUL in the key', { key: 'x\u0000', name: 'x', scope_kind: 'project' }],
    // An unpaired surrogate: jsonb refuses it (a 500 before), text would store U+FFFD instead.
    ['an unpaired surrogate in the key', { key: 'x\ud800', name: 'x', scope_kind: 'project' }],
    [
      'an unpaired surrogate in the metadata',
      { key: 'x8', name: 'x', scope_kind: 'project', defaults: { metadata: { note: 'half \ud83d' } } },
    ],
    [
      'an unpaired surrogate in a filter_json key',
      {
        key: 'x9',
        name: 'x',
        scope_kind: 'project',
        defaults: { event_subscriptions: [{ type: 'floor.committed', filter_json: { ['\udc00']: 1 } }] },
      },
    ],
  ])('POST with %s: 400 validation_error, nothing written', async (_name, body) => {
    await refused(() => post(body), '400 validation_error');
  });

  it('defaults naming a forbidden output target: 403 agent_allowed_output_target_forbidden', async () => {
    const res = await refused(
      () =>
        post({
          key: 'writer',
          name: 'Writer',
          scope_kind: 'project',
          defaults: { grants: { allowed_output_targets: ['derived_output', 'session_messages'] } },
        }),
      '403 agent_allowed_output_target_forbidden',
    );
    expect(res.body.error.details).toEqual({ forbidden_targets: ['session_messages'] });
  });

  it('default llm_profile_id and tool_policy_id must exist in the Workspace: 404 profile_not_found / tool_policy_not_found', async () => {
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const extra = await createExtraWorkspace(t, alice.accountId);
    const profile = await createLlmProfile(t, alice.accountId);
    const policy = await createToolPolicy(t, alice.apiKey);
    const deleted = await createLlmProfile(t, alice.accountId, { status: 'deleted' });
    const bobsProfile = await createLlmProfile(t, bob.accountId);
    const bobsPolicy = await createToolPolicy(t, bob.apiKey);
    const body = (defaults: Json) => ({
      key: `refs-${Math.random()}`,
      name: 'Refs',
      scope_kind: 'project',
      defaults,
    });
    for (const id of ['llmp_missing', deleted.id, bobsProfile.id])
      await refused(() => post(body({ llm_profile_id: id })), '404 profile_not_found');
    for (const id of ['tpol_missing', bobsPolicy.id])
      await refused(() => post(body({ tool_policy_id: id })), '404 tool_policy_not_found');
    // The profile and policy of the Workspace, not of another Workspace of the account.
    await refused(
      () =>
        t.http
          .post(`/workspaces/${extra.id}/agent-types`)
          .set('x-api-key', alice.apiKey)
          .send(body({ llm_profile_id: profile.id })),
      '404 profile_not_found',
    );
    const type = await createAgentType(t, alice.apiKey, ws, {
      defaults: { llm_profile_id: profile.id, tool_policy_id: policy.id },
    });
    expect(type.defaults).toMatchObject({ llm_profile_id: profile.id, tool_policy_id: policy.id });

    await refused(
      () => patch(type.id, { defaults: { llm_profile_id: bobsProfile.id } }),
      '404 profile_not_found',
    );
    await refused(
      () => patch(type.id, { defaults: { tool_policy_id: 'tpol_missing' } }),
      '404 tool_policy_not_found',
    );
    // A profile deleted since does not block a change of the other defaults.
    await setLlmProfileStatus(t, profile.id, 'deleted');
    const res = await patch(type.id, {
      defaults: { llm_profile_id: profile.id, tool_policy_id: policy.id, metadata: { v: 2 } },
    });
    expect([res.status, res.body.defaults.metadata]).toEqual([200, { v: 2 }]);
  });

  it('every default mcp_bindings[].mcp_server_id must be a server of the Workspace: 404 mcp_server_not_found', async () => {
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const extra = await createExtraWorkspace(t, alice.accountId);
    const own = await createMcpServer(t, alice.apiKey);
    const second = await createMcpServer(t, alice.apiKey);
    const bobsServer = await createMcpServer(t, bob.apiKey);
    const body = (ids: string[]) => ({
      key: `mcp-refs-${Math.random()}`,
      name: 'MCP refs',
      scope_kind: 'project',
      defaults: { mcp_bindings: ids.map((id) => ({ mcp_server_id: id, allowed_tools: null })) },
    });
    // A missing id and another account's server answer alike (the id given, nothing of Bob's).
    const answers: Json[] = [];
    for (const id of ['mcp_missing', bobsServer.id]) {
      const res = await refused(() => post(body([own.id, id])), '404 mcp_server_not_found');
      expect(res.body.error.details).toEqual({ mcp_server_id: id });
      expect(JSON.stringify(res.body)).not.toContain(bobsServer.name);
      answers.push({ ...res.body.error, message: res.body.error.message.replace(id, '<id>'), details: {} });
    }
    expect(answers[1]).toEqual(answers[0]);
    // A server of another Workspace of the same account is not the Workspace's either.
    await refused(
      () =>
        t.http
          .post(`/workspaces/${extra.id}/agent-types`)
          .set('x-api-key', alice.apiKey)
          .send(body([own.id])),
      '404 mcp_server_not_found',
    );

    const type = await createAgentType(t, alice.apiKey, ws, body([own.id]));
    expect(type.defaults.mcp_bindings).toEqual([
      { mcp_server_id: own.id, allowed_tools: null, config_override_json: null },
    ]);
    await refused(
      () => patch(type.id, { defaults: body([own.id, bobsServer.id]).defaults }),
      '404 mcp_server_not_found',
    );
    await refused(
      () => patch(type.id, { defaults: body(['mcp_missing']).defaults }),
      '404 mcp_server_not_found',
    );
    const added = await patch(type.id, { defaults: body([own.id, second.id]).defaults });
    expect([added.status, added.body.defaults.mcp_bindings.map((m: Json) => m.mcp_server_id)]).toEqual([
      200,
      [own.id, second.id],
    ]);
    // A server deleted since does not block a change of the other defaults; naming it anew does.
    const deleted = await t.http.delete(`/mcp-servers/${second.id}`).set('x-api-key', alice.apiKey);
    expect(deleted.status).toBe(200);
    const kept = await patch(type.id, {
      defaults: { ...body([own.id, second.id]).defaults, metadata: { v: 2 } },
    });
    expect([kept.status, kept.body.defaults.metadata]).toEqual([200, { v: 2 }]);
    const other = await createAgentType(t, alice.apiKey, ws);
    await refused(
      () => patch(other.id, { defaults: body([second.id]).defaults }),
      '404 mcp_server_not_found',
    );
  });

  it('a key already used in the Workspace: 409 agent_type_key_conflict; another Workspace may reuse it', async () => {
    await createAgentType(t, alice.apiKey, ws, { key: 'dup' });
    await refused(
      () => post({ key: 'dup', name: 'Again', scope_kind: 'project' }),
      '409 agent_type_key_conflict',
    );
    const extra = await createExtraWorkspace(t, alice.accountId);
    const other = await createAgentType(t, alice.apiKey, extra.id, { key: 'dup' });
    expect(other.workspace_id).toBe(extra.id);
  });

  it('a type id missing or of another Workspace: 404 agent_type_not_found on every type route', async () => {
    const extra = await createExtraWorkspace(t, alice.accountId);
    const elsewhere = await createAgentType(t, alice.apiKey, extra.id);
    for (const id of ['agt_missing', elsewhere.id]) {
      const before = await agentState(t);
      const results = [
        await t.http.get(`${base()}/${id}`).set('x-api-key', alice.apiKey),
        await patch(id, { name: 'x' }),
        await action(id, 'disable'),
        await action(id, 'enable'),
      ].map(outcome);
      expect(results).toEqual(Array(4).fill('404 agent_type_not_found'));
      expect(await agentState(t)).toEqual(before);
    }
  });

  it('PATCH changes name, status and defaults (replaced whole), logged with the changed fields', async () => {
    const type = await createAgentType(t, alice.apiKey, ws, {
      defaults: { metadata: { a: 1 }, event_subscriptions: [{ type: 'floor.committed' }] },
    });
    const res = await patch(type.id, { name: 'Renamed', defaults: { grants: { reads: ['transcript'] } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: type.id,
      key: type.key,
      name: 'Renamed',
      status: 'active',
      defaults: {
        llm_profile_id: null,
        tool_policy_id: null,
        mcp_bindings: [],
        event_subscriptions: [],
        grants: { reads: ['transcript'] },
        metadata: {},
      },
    });
    expect(res.body.updated_at).toBeGreaterThanOrEqual(type.updated_at);
    const logs = await logsOf(t, alice.accountId, 'agent_type.update', type.id);
    expect(logs).toHaveLength(1);
    expect(logs[0]?.diff).toEqual({ changed_fields: ['name', 'defaults'] });
    const disabled = await patch(type.id, { status: 'disabled' });
    expect([disabled.status, disabled.body.status]).toEqual([200, 'disabled']);
    const active = await patch(type.id, { status: 'active' });
    expect([active.status, active.body.status]).toEqual([200, 'active']);
    expect(await logsOf(t, alice.accountId, 'agent_type.update', type.id)).toHaveLength(3);
  });

  it('a PATCH that changes nothing writes nothing', async () => {
    const type = await createAgentType(t, alice.apiKey, ws, { name: 'Same' });
    const before = await agentState(t);
    const res = await patch(type.id, { name: 'Same', status: 'active', defaults: type.defaults });
    expect([res.status, res.body]).toEqual([200, type]);
    expect(await agentState(t)).toEqual(before);
  });

  it.each([
    ['key', { key: 'other' }],
    ['scope_kind', { scope_kind: 'floor' }],
    ['an unknown field', { colour: 'blue' }],
    ['status error', { status: 'error' }],
    ['status null', { status: null }],
    ['name too long', { name: 'n'.repeat(201) }],
    ['defaults null', { defaults: null }],
    ['defaults with a bad list', { defaults: { mcp_bindings: 'none' } }],
  ])('PATCH with %s: 400 validation_error, nothing written', async (_name, body) => {
    const type = await createAgentType(t, alice.apiKey, ws);
    await refused(() => patch(type.id, body), '400 validation_error');
  });

  it('PATCH defaults with a forbidden target: 403, nothing written', async () => {
    const type = await createAgentType(t, alice.apiKey, ws);
    await refused(
      () => patch(type.id, { defaults: { grants: { allowed_output_targets: ['floor'] } } }),
      '403 agent_allowed_output_target_forbidden',
    );
  });

  it('disable and enable: 200 with the type, idempotent, logged once per change', async () => {
    const type = await createAgentType(t, alice.apiKey, ws);
    const off = await action(type.id, 'disable');
    expect([off.status, off.body.status]).toEqual([200, 'disabled']);
    const again = await action(type.id, 'disable');
    expect([again.status, again.body]).toEqual([200, off.body]);
    expect(await logsOf(t, alice.accountId, 'agent_type.disable', type.id)).toHaveLength(1);
    const on = await action(type.id, 'enable');
    expect([on.status, on.body.status]).toEqual([200, 'active']);
    const onAgain = await action(type.id, 'enable');
    expect([onAgain.status, onAgain.body]).toEqual([200, on.body]);
    const logs = await logsOf(t, alice.accountId, 'agent_type.enable', type.id);
    expect(logs).toHaveLength(1);
    expect([logs[0]?.before_ref, logs[0]?.after_ref]).toEqual([{ status: 'disabled' }, { status: 'active' }]);
  });

  it('disable while a binding is enabled: 409 agent_type_in_use (route and PATCH); allowed once it is disabled', async () => {
    const type = await createAgentType(t, alice.apiKey, ws);
    const project = await createProject(t, { accountId: alice.accountId });
    const binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: type.id });
    const res = await refused(() => action(type.id, 'disable'), '409 agent_type_in_use');
    expect(res.body.error.details).toEqual({ enabled_binding_count: 1 });
    await refused(() => patch(type.id, { status: 'disabled', name: 'Not applied' }), '409 agent_type_in_use');
    const off = await t.http
      .post(`/projects/${project.id}/agent-bindings/${binding.id}/disable`)
      .set('x-api-key', alice.apiKey);
    expect(off.status).toBe(200);
    const disabled = await action(type.id, 'disable');
    expect([disabled.status, disabled.body.status]).toEqual([200, 'disabled']);
  });

  it('has no DELETE route', async () => {
    const type = await createAgentType(t, alice.apiKey, ws);
    const res = await t.http.delete(`${base()}/${type.id}`).set('x-api-key', alice.apiKey);
    expect(res.status).toBe(404);
    const still = await t.http.get(`${base()}/${type.id}`).set('x-api-key', alice.apiKey);
    expect(still.body).toEqual(type);
  });
});
