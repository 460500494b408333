import type { ProjectRow } from '@hearth/persistence';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { createLlmProfile, createMcpServer, createToolPolicy } from '../support/factories/settings';
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
 * Spec 1 "Agent Bindings": create, read, PATCH, disable and enable a binding of an Agent Type in a
 * Project. A binding only narrows its type (403 `agent_override_expands_*`); a null override
 * inherits the type's current default, shown in the view with `inherits`; a type whose defaults
 * are narrowed under a binding puts it in `error`. A refused request writes nothing.
 */
describe('Agent Bindings', () => {
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;
  let ws: string;
  let project: ProjectRow;
  /** A type with something to narrow in every field. */
  let rich: Json;

  const RICH_DEFAULTS = {
    llm_profile_id: null,
    tool_policy_id: null,
    mcp_bindings: [
      { mcp_server_id: 'mcp_limited', allowed_tools: ['search', 'fetch'] },
      { mcp_server_id: 'mcp_open', allowed_tools: null },
    ],
    event_subscriptions: [
      { type: 'floor.committed' },
      { type: 'derived_output.created', filter_json: { payload: { domain: 'summary' } } },
    ],
    grants: { allowed_output_targets: ['derived_output', 'project_inbox'], reads: ['transcript'], level: 2 },
    metadata: { team: 'lore', tone: 'dry' },
  };

  const base = (p: { id: string } = project) => `/projects/${p.id}/agent-bindings`;
  const post = (body: Json, p: { id: string } = project) =>
    t.http.post(base(p)).set('x-api-key', alice.apiKey).send(body);
  const patch = (id: string, body: Json) =>
    t.http.patch(`${base()}/${id}`).set('x-api-key', alice.apiKey).send(body);
  const action = (id: string, verb: 'enable' | 'disable') =>
    t.http.post(`${base()}/${id}/${verb}`).set('x-api-key', alice.apiKey);
  const get = (id: string) => t.http.get(`${base()}/${id}`).set('x-api-key', alice.apiKey);

  async function refused(send: () => PromiseLike<{ status: number; body: Json }>, expected: string) {
    const before = await agentState(t);
    const res = await send();
    expect(outcome(res)).toBe(expected);
    expect(await agentState(t)).toEqual(before);
    return res;
  }

  /** MCP servers of Alice's Workspace with fixed ids (the tables below name them before any hook runs). */
  async function insertMcpServers(ids: string[]) {
    const now = Date.now();
    await t.resources.database.db
      .insertInto('mcp_servers')
      .values(
        ids.map((id) => ({
          id,
          account_id: alice.accountId,
          workspace_id: ws,
          name: id,
          url: 'https://mcp.example.com/sse',
          status: 'enabled' as const,
          tools: JSON.stringify(['search', 'fetch', 'delete']),
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    bob = await createAccountCaller(t, { name: 'Bob' });
    ws = (await defaultWorkspace(t, alice.accountId)).id;
    project = await createProject(t, { accountId: alice.accountId });
    await insertMcpServers(['mcp_limited', 'mcp_open', 'mcp_other']);
    rich = await createAgentType(t, alice.apiKey, ws, { key: 'rich', defaults: RICH_DEFAULTS });
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates an inheriting binding: 201, enabled, effective values of the type, every override inherited', async () => {
    const res = await post({ agent_type_id: rich.id });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^agb_/),
      workspace_id: ws,
      project_id: project.id,
      account_id: alice.accountId,
      agent_type_id: rich.id,
      status: 'enabled',
      status_reason: null,
      scope_kind: 'project',
      llm_profile_id: null,
      tool_policy_id: null,
      mcp_bindings: rich.defaults.mcp_bindings,
      event_subscriptions: rich.defaults.event_subscriptions,
      grants: rich.defaults.grants,
      metadata: { team: 'lore', tone: 'dry' },
      inherits: ['llm_profile_id', 'tool_policy_id', 'mcp_bindings', 'event_subscriptions', 'grants'],
      created_at: expect.any(Number),
      updated_at: res.body.created_at,
    });
    const logs = await logsOf(t, alice.accountId, 'agent_binding.create', res.body.id);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      project_id: project.id,
      workspace_id: ws,
      target_type: 'agent_binding',
      metadata: { agent_type_id: rich.id },
    });
    expect(await get(res.body.id).then((r) => [r.status, r.body])).toEqual([200, res.body]);
  });

  it('creates a narrowing binding: set overrides shown as given, metadata over the type’s', async () => {
    const profile = await createLlmProfile(t, alice.accountId);
    const policy = await createToolPolicy(t, alice.apiKey);
    const res = await post({
      agent_type_id: rich.id,
      scope_kind: 'session',
      llm_profile_id: profile.id,
      tool_policy_id: policy.id,
      mcp_bindings: [{ mcp_server_id: 'mcp_limited', allowed_tools: ['search'] }],
      event_subscriptions: [{ type: 'floor.committed', filter_json: { source: 'api' } }],
      grants: { allowed_output_targets: ['derived_output'], reads: ['transcript'] },
      metadata: { tone: 'warm', own: true },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'enabled',
      scope_kind: 'session',
      llm_profile_id: profile.id,
      tool_policy_id: policy.id,
      mcp_bindings: [{ mcp_server_id: 'mcp_limited', allowed_tools: ['search'], config_override_json: null }],
      event_subscriptions: [{ type: 'floor.committed', filter_json: { source: 'api' } }],
      grants: { allowed_output_targets: ['derived_output'], reads: ['transcript'] },
      metadata: { team: 'lore', tone: 'warm', own: true },
      inherits: [],
    });
  });

  it('lists the Project’s bindings in creation order', async () => {
    const p = await createProject(t, { accountId: alice.accountId });
    const a = await createBinding(t, alice.apiKey, p.id, { agent_type_id: rich.id });
    const b = await createBinding(t, alice.apiKey, p.id, { agent_type_id: rich.id, scope_kind: 'floor' });
    const res = await t.http.get(base(p)).set('x-api-key', alice.apiKey);
    expect([res.status, res.body]).toEqual([200, { items: [a, b] }]);
  });

  describe('create refusals', () => {
    it('agent_type_id missing or not a string: 400', async () => {
      await refused(() => post({}), '400 validation_error');
      await refused(() => post({ agent_type_id: 5 }), '400 validation_error');
      await refused(() => post({ agent_type_id: rich.id, status: 'disabled' }), '400 validation_error');
    });

    it('a missing type or another account’s: 404 agent_type_not_found', async () => {
      await refused(() => post({ agent_type_id: 'agt_missing' }), '404 agent_type_not_found');
      const bobs = await createAgentType(t, bob.apiKey, (await defaultWorkspace(t, bob.accountId)).id);
      const res = await refused(() => post({ agent_type_id: bobs.id }), '404 agent_type_not_found');
      expect(JSON.stringify(res.body)).not.toContain(bobs.key);
    });

    it('a type of another Workspace of the account: 409 agent_type_workspace_mismatch', async () => {
      const extra = await createExtraWorkspace(t, alice.accountId);
      const elsewhere = await createAgentType(t, alice.apiKey, extra.id);
      await refused(() => post({ agent_type_id: elsewhere.id }), '409 agent_type_workspace_mismatch');
    });

    it('a scope wider than the type’s: 409 agent_type_workspace_mismatch; equal or narrower accepted', async () => {
      const sessionType = await createAgentType(t, alice.apiKey, ws, { scope_kind: 'session' });
      for (const scope of ['project', 'workspace'])
        await refused(
          () => post({ agent_type_id: sessionType.id, scope_kind: scope }),
          '409 agent_type_workspace_mismatch',
        );
      const floor = await post({ agent_type_id: sessionType.id, scope_kind: 'floor' });
      expect([floor.status, floor.body.scope_kind]).toEqual([201, 'floor']);
      const inherited = await post({ agent_type_id: sessionType.id });
      expect([inherited.status, inherited.body.scope_kind]).toEqual([201, 'session']);
      await refused(
        () => post({ agent_type_id: sessionType.id, scope_kind: 'planet' }),
        '400 validation_error',
      );
    });

    it('a disabled type: 409 agent_type_disabled', async () => {
      const type = await createAgentType(t, alice.apiKey, ws);
      await t.http.post(`/workspaces/${ws}/agent-types/${type.id}/disable`).set('x-api-key', alice.apiKey);
      await refused(() => post({ agent_type_id: type.id }), '409 agent_type_disabled');
    });

    it.each([
      [
        'a target the type lacks',
        { grants: { allowed_output_targets: ['client_data'] } },
        'agent_override_expands_output_targets',
      ],
      ['a grant the type lacks', { grants: { admin: true } }, 'agent_override_expands_grants'],
      ['a wider grant value', { grants: { level: 3 } }, 'agent_override_expands_grants'],
      ['a read the type lacks', { grants: { reads: ['project_events'] } }, 'agent_override_expands_grants'],
      [
        'an event type the type lacks',
        { event_subscriptions: [{ type: 'session.archived' }] },
        'agent_override_expands_subscriptions',
      ],
      [
        'a looser filter',
        { event_subscriptions: [{ type: 'derived_output.created' }] },
        'agent_override_expands_subscriptions',
      ],
      [
        'an MCP server the type lacks',
        { mcp_bindings: [{ mcp_server_id: 'mcp_other' }] },
        'agent_override_expands_mcp',
      ],
      [
        'unrestricted tools on a limited server',
        { mcp_bindings: [{ mcp_server_id: 'mcp_limited', allowed_tools: null }] },
        'agent_override_expands_mcp',
      ],
      [
        'a tool the server does not allow',
        { mcp_bindings: [{ mcp_server_id: 'mcp_limited', allowed_tools: ['delete'] }] },
        'agent_override_expands_mcp',
      ],
    ])('%s: 403 %s', async (_name, overrides, code) => {
      await refused(() => post({ agent_type_id: rich.id, ...overrides }), `403 ${code}`);
    });

    it('a forbidden output target: 403 agent_allowed_output_target_forbidden', async () => {
      await refused(
        () => post({ agent_type_id: rich.id, grants: { allowed_output_targets: ['memory_live'] } }),
        '403 agent_allowed_output_target_forbidden',
      );
    });

    it('a missing, deleted or foreign LLM profile: 404 profile_not_found; a missing or foreign tool policy: 404 tool_policy_not_found', async () => {
      const deleted = await createLlmProfile(t, alice.accountId, { status: 'deleted' });
      const bobsProfile = await createLlmProfile(t, bob.accountId);
      for (const id of ['llmp_missing', deleted.id, bobsProfile.id])
        await refused(() => post({ agent_type_id: rich.id, llm_profile_id: id }), '404 profile_not_found');
      const bobsPolicy = await createToolPolicy(t, bob.apiKey);
      for (const id of ['tpol_missing', bobsPolicy.id])
        await refused(
          () => post({ agent_type_id: rich.id, tool_policy_id: id }),
          '404 tool_policy_not_found',
        );
    });

    it('every mcp_bindings[].mcp_server_id must be a server of the Workspace: 404 mcp_server_not_found, another account’s like a missing one', async () => {
      const bobsServer = await createMcpServer(t, bob.apiKey);
      // The type names the server too, so the narrowing check passes and the reference is what refuses.
      const type = await createAgentType(t, alice.apiKey, ws, {
        defaults: { mcp_bindings: [{ mcp_server_id: 'mcp_limited', allowed_tools: null }] },
      });
      for (const id of ['mcp_missing', bobsServer.id]) {
        // Not one of the type's servers: the narrowing check answers first, alike for both.
        await refused(
          () => post({ agent_type_id: type.id, mcp_bindings: [{ mcp_server_id: id }] }),
          '403 agent_override_expands_mcp',
        );
      }
      // A server the type names that is gone from the Workspace (deleted since, or stored before the
      // check existed): the binding may not name it.
      await t.resources.database.db.deleteFrom('mcp_servers').where('id', '=', 'mcp_limited').execute();
      try {
        const res = await refused(
          () => post({ agent_type_id: type.id, mcp_bindings: [{ mcp_server_id: 'mcp_limited' }] }),
          '404 mcp_server_not_found',
        );
        expect(res.body.error.details).toEqual({ mcp_server_id: 'mcp_limited' });
      } finally {
        await insertMcpServers(['mcp_limited']);
      }
      const ok = await post({
        agent_type_id: type.id,
        mcp_bindings: [{ mcp_server_id: 'mcp_limited', allowed_tools: ['search'] }],
      });
      expect([ok.status, ok.body.mcp_bindings]).toEqual([
        201,
        [{ mcp_server_id: 'mcp_limited', allowed_tools: ['search'], config_override_json: null }],
      ]);
    });

    it.each([
      ['mcp_bindings not a list', { mcp_bindings: { a: 1 } }],
      ['an event subscription without type', { event_subscriptions: [{ filter_json: {} }] }],
      ['grants not an object', { grants: ['derived_output'] }],
      ['an unknown output target', { grants: { allowed_output_targets: ['moon'] } }],
      ['metadata not an object', { metadata: 'x' }],
      ['an empty llm_profile_id', { llm_profile_id: '' }],
      ['a NUL in an MCP server id', { mcp_bindings: [{ mcp_server_id: 'mcp_\u0000' }] }],
      // jsonb refuses an unpaired surrogate (it was a 500).
      ['an unpaired surrogate in the metadata', { metadata: { note: 'half \ud83d' } }],
      ['an unpaired surrogate in an MCP server id', { mcp_bindings: [{ mcp_server_id: 'mcp_\udc00' }] }],
      ['an unpaired surrogate in a grant key', { grants: { ['\ud800']: true } }],
    ])('%s: 400 validation_error', async (_name, overrides) => {
      await refused(() => post({ agent_type_id: rich.id, ...overrides }), '400 validation_error');
    });

    it('metadata limit: 64 KiB serialised accepted, one byte more refused', async () => {
      const padding = 64 * 1024 - JSON.stringify({ a: '' }).length;
      const ok = await post({ agent_type_id: rich.id, metadata: { a: 'x'.repeat(padding) } });
      expect(ok.status).toBe(201);
      await refused(
        () => post({ agent_type_id: rich.id, metadata: { a: 'x'.repeat(padding + 1) } }),
        '400 validation_error',
      );
    });
  });

  it('a binding id missing or of another Project: 404 binding_not_found on every binding route', async () => {
    const other = await createProject(t, { accountId: alice.accountId });
    const foreign = await createBinding(t, alice.apiKey, other.id, { agent_type_id: rich.id });
    for (const id of ['agb_missing', foreign.id]) {
      const before = await agentState(t);
      const results = [
        await get(id),
        await patch(id, { metadata: {} }),
        await action(id, 'disable'),
        await action(id, 'enable'),
        await t.http.post(`${base()}/${id}/run`).set('x-api-key', alice.apiKey).send({}),
      ].map(outcome);
      expect(results).toEqual(Array(5).fill('404 binding_not_found'));
      expect(await agentState(t)).toEqual(before);
    }
  });

  describe('PATCH', () => {
    it('changes only the given fields; null inherits again; logged with the changed fields', async () => {
      const binding = await createBinding(t, alice.apiKey, project.id, {
        agent_type_id: rich.id,
        grants: { allowed_output_targets: ['derived_output'] },
        metadata: { own: 1 },
      });
      const res = await patch(binding.id, {
        event_subscriptions: [{ type: 'floor.committed' }],
        scope_kind: 'floor',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        scope_kind: 'floor',
        event_subscriptions: [{ type: 'floor.committed', filter_json: null }],
        grants: { allowed_output_targets: ['derived_output'] },
        metadata: { team: 'lore', tone: 'dry', own: 1 },
        inherits: ['llm_profile_id', 'tool_policy_id', 'mcp_bindings'],
      });
      const inheritAgain = await patch(binding.id, {
        grants: null,
        event_subscriptions: null,
        metadata: null,
      });
      expect(inheritAgain.status).toBe(200);
      expect(inheritAgain.body).toMatchObject({
        grants: rich.defaults.grants,
        event_subscriptions: rich.defaults.event_subscriptions,
        metadata: rich.defaults.metadata,
        inherits: ['llm_profile_id', 'tool_policy_id', 'mcp_bindings', 'event_subscriptions', 'grants'],
      });
      const logs = await logsOf(t, alice.accountId, 'agent_binding.update', binding.id);
      expect(logs.map((l) => l.diff)).toEqual([
        { changed_fields: ['scope_kind', 'event_subscriptions'] },
        { changed_fields: ['event_subscriptions', 'grants', 'metadata'] },
      ]);
    });

    it('a PATCH that changes nothing writes nothing', async () => {
      const binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: rich.id });
      const before = await agentState(t);
      const res = await patch(binding.id, { grants: null, scope_kind: 'project' });
      expect([res.status, res.body]).toEqual([200, binding]);
      expect(await agentState(t)).toEqual(before);
    });

    it.each([
      ['agent_type_id', { agent_type_id: 'agt_other' }],
      ['status error', { status: 'error' }],
      ['status unknown', { status: 'paused' }],
      ['scope_kind null', { scope_kind: null }],
      ['an unknown field', { colour: 'red' }],
    ])('%s: 400 validation_error, nothing written', async (_name, body) => {
      const binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: rich.id });
      await refused(() => patch(binding.id, body), '400 validation_error');
    });

    it('an enabled result must narrow: 403 and the binding unchanged', async () => {
      const binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: rich.id });
      await refused(
        () => patch(binding.id, { grants: { allowed_output_targets: ['plugin_data'] } }),
        '403 agent_override_expands_output_targets',
      );
      await refused(
        () => patch(binding.id, { scope_kind: 'workspace' }),
        '409 agent_type_workspace_mismatch',
      );
      await refused(() => patch(binding.id, { llm_profile_id: 'llmp_missing' }), '404 profile_not_found');
      expect((await get(binding.id)).body).toEqual(binding);
    });

    it('an MCP server id the binding did not name must be a server of the Workspace, also while disabled: 404 mcp_server_not_found', async () => {
      const bobsServer = await createMcpServer(t, bob.apiKey);
      const binding = await createBinding(t, alice.apiKey, project.id, {
        agent_type_id: rich.id,
        mcp_bindings: [{ mcp_server_id: 'mcp_open', allowed_tools: ['search'] }],
      });
      // Disabled, a binding is not held to the type (docs/decisions.md "Agents"), so the reference
      // check is what refuses a missing or foreign server: alike, naming only the id given.
      for (const id of ['mcp_missing', bobsServer.id]) {
        const res = await refused(
          () => patch(binding.id, { status: 'disabled', mcp_bindings: [{ mcp_server_id: id }] }),
          '404 mcp_server_not_found',
        );
        expect(res.body.error).toEqual({
          code: 'mcp_server_not_found',
          message: `MCP server ${id} not found`,
          details: { mcp_server_id: id },
        });
        // Enabled, the narrowing check answers first (not one of the type's servers).
        await refused(
          () => patch(binding.id, { mcp_bindings: [{ mcp_server_id: id }] }),
          '403 agent_override_expands_mcp',
        );
      }
      expect((await get(binding.id)).body).toEqual(binding);
      const changed = await patch(binding.id, {
        mcp_bindings: [
          { mcp_server_id: 'mcp_open', allowed_tools: ['fetch'] },
          { mcp_server_id: 'mcp_limited', allowed_tools: ['search'] },
        ],
      });
      expect([changed.status, changed.body.mcp_bindings.map((m: Json) => m.mcp_server_id)]).toEqual([
        200,
        ['mcp_open', 'mcp_limited'],
      ]);
      // A server the binding already names and that was deleted since does not block other changes.
      await t.resources.database.db.deleteFrom('mcp_servers').where('id', '=', 'mcp_open').execute();
      try {
        const kept = await patch(binding.id, {
          mcp_bindings: [
            { mcp_server_id: 'mcp_open', allowed_tools: ['search'] },
            { mcp_server_id: 'mcp_limited', allowed_tools: ['fetch'] },
          ],
        });
        expect([kept.status, kept.body.mcp_bindings[1].allowed_tools]).toEqual([200, ['fetch']]);
      } finally {
        await insertMcpServers(['mcp_open']);
      }
    });

    it('status: disable and enable through PATCH; enabling runs the create checks', async () => {
      const type = await createAgentType(t, alice.apiKey, ws);
      const binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: type.id });
      const off = await patch(binding.id, { status: 'disabled' });
      expect([off.status, off.body.status]).toEqual([200, 'disabled']);
      await t.http.post(`/workspaces/${ws}/agent-types/${type.id}/disable`).set('x-api-key', alice.apiKey);
      await refused(() => patch(binding.id, { status: 'enabled' }), '409 agent_type_disabled');
      await t.http.post(`/workspaces/${ws}/agent-types/${type.id}/enable`).set('x-api-key', alice.apiKey);
      const on = await patch(binding.id, { status: 'enabled' });
      expect([on.status, on.body.status]).toEqual([200, 'enabled']);
    });
  });

  describe('disable and enable', () => {
    it('200 with the binding, idempotent, logged once per change', async () => {
      const binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: rich.id });
      const off = await action(binding.id, 'disable');
      expect([off.status, off.body.status]).toEqual([200, 'disabled']);
      const offAgain = await action(binding.id, 'disable');
      expect([offAgain.status, offAgain.body]).toEqual([200, off.body]);
      const on = await action(binding.id, 'enable');
      expect([on.status, on.body.status, on.body.status_reason]).toEqual([200, 'enabled', null]);
      const onAgain = await action(binding.id, 'enable');
      expect([onAgain.status, onAgain.body]).toEqual([200, on.body]);
      expect(await logsOf(t, alice.accountId, 'agent_binding.disable', binding.id)).toHaveLength(1);
      expect(await logsOf(t, alice.accountId, 'agent_binding.enable', binding.id)).toHaveLength(1);
    });

    it('enable of a binding whose type is disabled: 409 agent_type_disabled', async () => {
      const type = await createAgentType(t, alice.apiKey, ws);
      const binding = await createBinding(t, alice.apiKey, project.id, { agent_type_id: type.id });
      await action(binding.id, 'disable');
      const typeOff = await t.http
        .post(`/workspaces/${ws}/agent-types/${type.id}/disable`)
        .set('x-api-key', alice.apiKey);
      expect(typeOff.status).toBe(200);
      await refused(() => action(binding.id, 'enable'), '409 agent_type_disabled');
    });
  });

  it('narrowing a type’s defaults under a binding puts it in error; it stays there until fixed and enabled', async () => {
    const type = await createAgentType(t, alice.apiKey, ws, {
      defaults: {
        grants: { allowed_output_targets: ['derived_output', 'project_inbox'] },
        event_subscriptions: [{ type: 'floor.committed' }],
      },
    });
    const narrowing = await createBinding(t, alice.apiKey, project.id, {
      agent_type_id: type.id,
      grants: { allowed_output_targets: ['project_inbox'] },
    });
    const inheriting = await createBinding(t, alice.apiKey, project.id, { agent_type_id: type.id });
    const stillNarrow = await createBinding(t, alice.apiKey, project.id, {
      agent_type_id: type.id,
      event_subscriptions: [],
    });

    const res = await t.http
      .patch(`/workspaces/${ws}/agent-types/${type.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ defaults: { grants: { allowed_output_targets: ['derived_output'] } } });
    expect(res.status).toBe(200);

    expect((await get(narrowing.id)).body).toMatchObject({
      status: 'error',
      status_reason: 'agent_override_expands_output_targets',
      grants: { allowed_output_targets: ['project_inbox'] },
    });
    expect((await get(inheriting.id)).body).toMatchObject({
      status: 'enabled',
      status_reason: null,
      grants: { allowed_output_targets: ['derived_output'] },
      event_subscriptions: [],
    });
    expect((await get(stillNarrow.id)).body).toMatchObject({ status: 'enabled', status_reason: null });
    const logs = await logsOf(t, alice.accountId, 'agent_type.update', type.id);
    expect(logs[0]?.metadata).toEqual({
      bindings_set_to_error: [
        {
          id: narrowing.id,
          project_id: project.id,
          previous_status: 'enabled',
          status_reason: 'agent_override_expands_output_targets',
        },
      ],
    });

    // An errored binding does not run and cannot be enabled while it widens; inheriting again fixes it.
    const run = await t.http.post(`${base()}/${narrowing.id}/run`).set('x-api-key', alice.apiKey).send({});
    expect(outcome(run)).toBe('409 binding_disabled');
    await refused(() => action(narrowing.id, 'enable'), '403 agent_override_expands_output_targets');
    const fixed = await patch(narrowing.id, { grants: null });
    expect(fixed.body).toMatchObject({
      status: 'error',
      status_reason: 'agent_override_expands_output_targets',
    });
    const enabled = await action(narrowing.id, 'enable');
    expect([enabled.status, enabled.body.status, enabled.body.status_reason]).toEqual([200, 'enabled', null]);
  });
});
