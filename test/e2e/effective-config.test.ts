import type { ProjectRow, SessionRow } from '@hearth/persistence';
import { createSessionRow } from '../support/factories/events';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { archiveProject, createProject } from '../support/factories/projects';
import {
  createLlmProfile,
  createMcpServer,
  createToolPolicy,
  setLlmProfileStatus,
} from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  activateProfile,
  createProfile,
  newMasterKey,
  tamperProfileKey,
} from '../support/factories/llm-profiles';
import { createSession } from '../support/factories/sessions';

const SLOTS = ['*', 'narrator', 'director', 'verifier', 'memory'];
const ENV = {
  LLM_PROVIDER: 'openai',
  LLM_MODEL: 'gpt-env',
  LLM_BASE_URL: 'https://llm.example.com/v1',
  LLM_API_KEY: 'sk-env-secret',
};

/**
 * The effective-config views (docs/decisions.md "Settings"): env-only defaults, a PUT reflected with
 * its source layer, layers that fall away with a warning, the two envelopes.
 */
describe('Effective config', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: ENV });
    owner = await createAccountCaller(t, { name: 'Owner' });
  });
  afterAll(async () => {
    await t.close();
  });

  const projectView = async (p: Pick<ProjectRow, 'id'>) => {
    const res = await t.http.get(`/projects/${p.id}/effective-config`).set('x-api-key', owner.apiKey);
    expect(res.status).toBe(200);
    return res.body;
  };
  const put = async (p: Pick<ProjectRow, 'id'>, path: string, body: object) => {
    const res = await t.http
      .put(`/projects/${p.id}/settings/${path}`)
      .set('x-api-key', owner.apiKey)
      .send(body);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('shows env-only defaults without overrides, bare on the Project route', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const view = await projectView(project);
    expect(view.data).toBeUndefined();
    expect(view).toMatchObject({
      project_id: project.id,
      workspace_id: project.workspace_id,
      session_id: null,
    });
    expect(view.model_slots).toEqual(
      SLOTS.map((slot) => ({
        slot,
        source: 'env',
        scope: null,
        profile_id: null,
        override_id: null,
        preset_name: null,
        provider: 'openai',
        model_id: 'gpt-env',
        base_url: 'https://llm.example.com/v1',
        params: null,
        field_sources: { provider: 'env', model_id: 'env', base_url: 'env', params: null },
      })),
    );
    expect(JSON.stringify(view)).not.toContain('sk-env-secret');
    expect(view.tool_policy).toEqual({ source: 'none', policies: [] });
    expect(view.mcp_bindings).toEqual([]);
    expect(view.warnings).toEqual([]);
    expect(view.prompt_policy_defaults.structure.mode).toEqual({
      value: 'default',
      source: 'system_default',
    });
    expect(view.prompt_policy_defaults.visibility.hidden_floor_ranges).toEqual({
      value: [],
      source: 'system_default',
    });
    expect(view.prompt_policy_defaults.source_selection.history.mode).toEqual({
      value: 'full',
      source: 'system_default',
    });
    expect(Object.keys(view.prompt_policy_defaults).sort()).toEqual([
      'budget',
      'delivery',
      'source_selection',
      'structure',
      'visibility',
    ]);
  });

  it('reflects the LLM override with its source layer, and falls back when its profile is disabled', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const profile = await createLlmProfile(t, owner.accountId, {
      provider: 'anthropic',
      model_id: 'claude-base',
      preset_name: 'Writer',
      base_url: 'https://anthropic.example.com',
    });
    const override = await put(project, 'llm-profile-override', {
      base_profile_id: profile.id,
      override_json: { model_id: 'claude-tuned', params: { temperature: 0.7, top_p: null } },
    });
    const view = await projectView(project);
    expect(view.model_slots.map((s: { slot: string }) => s.slot)).toEqual(SLOTS);
    for (const slot of view.model_slots) {
      expect(slot).toEqual({
        slot: slot.slot,
        source: 'project_override',
        scope: 'project',
        profile_id: profile.id,
        override_id: override.id,
        preset_name: 'Writer',
        provider: 'anthropic',
        model_id: 'claude-tuned',
        base_url: 'https://anthropic.example.com',
        params: { temperature: 0.7 },
        field_sources: {
          provider: 'profile',
          model_id: 'project_override',
          base_url: 'profile',
          params: 'project_override',
        },
      });
    }
    await setLlmProfileStatus(t, profile.id, 'disabled');
    const fallback = await projectView(project);
    expect(fallback.model_slots.every((s: { source: string }) => s.source === 'env')).toBe(true);
    expect(fallback.warnings).toEqual([
      expect.objectContaining({ code: 'profile_disabled', override_id: override.id, profile_id: profile.id }),
    ]);
    await setLlmProfileStatus(t, profile.id, 'deleted');
    expect((await projectView(project)).warnings).toEqual([
      expect.objectContaining({ code: 'profile_not_found' }),
    ]);
  });

  it('reflects MCP bindings and tool policies with their sources', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const open = await createMcpServer(t, owner.apiKey, {
      name: 'Open',
      tools: ['search', 'fetch', 'shell'],
    });
    const narrow = await createMcpServer(t, owner.apiKey, { name: 'Narrow', tools: ['read', 'write'] });
    const off = await createMcpServer(t, owner.apiKey, { name: 'Off', tools: ['x'] });
    const openBinding = await put(project, 'mcp-bindings', {
      mcp_server_id: open.id,
      config_override_json: { region: 'eu' },
    });
    await put(project, 'mcp-bindings', { mcp_server_id: narrow.id, allowed_tools: ['read'] });
    await put(project, 'mcp-bindings', { mcp_server_id: off.id, status: 'disabled' });

    let view = await projectView(project);
    expect(view.mcp_bindings).toEqual([
      {
        binding_id: openBinding.id,
        mcp_server_id: open.id,
        source: 'project_override',
        server: { name: 'Open', url: 'https://mcp.example.com/sse', status: 'enabled' },
        allowed_tools: [],
        effective_tools: { value: ['search', 'fetch', 'shell'], source: 'mcp_server' },
        permitted_tools: { value: ['search', 'fetch', 'shell'], source: 'mcp_server' },
        config_override_json: { region: 'eu' },
      },
      expect.objectContaining({
        mcp_server_id: narrow.id,
        effective_tools: { value: ['read'], source: 'project_override' },
      }),
    ]);

    const policy = await createToolPolicy(t, owner.apiKey, {
      name: 'No shell',
      policy_json: { mode: 'deny', tools: ['shell'] },
    });
    const policyOverride = await put(project, 'tool-policy-overrides', { base_policy_id: policy.id });
    view = await projectView(project);
    expect(view.tool_policy).toEqual({
      source: 'project_override',
      policies: [
        {
          override_id: policyOverride.id,
          base_policy_id: policy.id,
          base_policy_name: 'No shell',
          source: 'project_override',
          mode: { value: 'deny', source: 'tool_policy' },
          tools: { value: ['shell'], source: 'tool_policy' },
        },
      ],
    });
    expect(view.mcp_bindings[0].permitted_tools).toEqual({
      value: ['search', 'fetch'],
      source: 'tool_policy',
    });

    await put(project, 'tool-policy-overrides', {
      base_policy_id: policy.id,
      override_json: { tools: ['fetch'] },
    });
    view = await projectView(project);
    expect(view.tool_policy.policies[0].tools).toEqual({ value: ['fetch'], source: 'project_override' });
    expect(view.tool_policy.policies[0].mode).toEqual({ value: 'deny', source: 'tool_policy' });
    expect(view.mcp_bindings[0].permitted_tools.value).toEqual(['search', 'shell']);

    // An archived override is not applied; a disabled server is reported, not offered.
    await put(project, 'tool-policy-overrides', { base_policy_id: policy.id, status: 'archived' });
    await t.http
      .patch(`/mcp-servers/${narrow.id}`)
      .set('x-api-key', owner.apiKey)
      .send({ status: 'disabled' });
    view = await projectView(project);
    expect(view.tool_policy).toEqual({ source: 'none', policies: [] });
    expect(view.mcp_bindings.map((b: { mcp_server_id: string }) => b.mcp_server_id)).toEqual([open.id]);
    expect(view.warnings).toEqual([
      expect.objectContaining({ code: 'mcp_server_disabled', mcp_server_id: narrow.id }),
    ]);
  });

  it('serves the session route bare (a spec 1 route) with the session id, also on an archived Project', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const session: SessionRow = await createSessionRow(t, project);
    const res = await t.http.get(`/sessions/${session.id}/effective-config`).set('x-api-key', owner.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.data).toBeUndefined();
    expect(res.body).toMatchObject({ project_id: project.id, session_id: session.id });
    expect(res.body.model_slots).toHaveLength(5);
    await archiveProject(t, project.id);
    const archived = await t.http
      .get(`/projects/${project.id}/effective-config`)
      .set('x-api-key', owner.apiKey);
    expect([archived.status, archived.body.error.code]).toEqual([409, 'project_archived']);
    expect(
      (await t.http.get(`/sessions/${session.id}/effective-config`).set('x-api-key', owner.apiKey)).status,
    ).toBe(200);
  });
});

describe('Effective config without LLM_* configuration', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('shows env slots with null values', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const res = await t.http.get(`/projects/${project.id}/effective-config`).set('x-api-key', owner.apiKey);
    expect(res.body.model_slots[0]).toMatchObject({
      slot: '*',
      source: 'env',
      provider: null,
      model_id: null,
      base_url: null,
    });
  });
});

/** Issue 6: the account's global and session profile bindings as layers (docs/decisions.md "Model profiles"). */
describe('Effective config with profile bindings', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { ...ENV, APP_SECRETS_MASTER_KEY: newMasterKey() } });
    owner = await createAccountCaller(t, { name: 'Owner' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('orders session_profile > project_override > global_profile > env, slot over `*`, and skips undecryptable bindings', async () => {
    const session = await createSession(t, { apiKey: owner.apiKey });
    const global = await createProfile(t, owner.apiKey, {
      model_id: 'global',
      base_url: 'https://g.example.com',
    });
    const narrator = await createProfile(t, owner.apiKey, { model_id: 'global-narrator' });
    const local = await createProfile(t, owner.apiKey, { model_id: 'session-memory' });
    await activateProfile(t, owner.apiKey, global.id, { params: { temperature: 0.4, top_p: null } });
    await activateProfile(t, owner.apiKey, narrator.id, { instance_slot: 'narrator' });
    await activateProfile(t, owner.apiKey, local.id, {
      scope: 'session',
      session_id: session.id,
      instance_slot: 'memory',
    });
    const view = async (path: string) => {
      const res = await t.http.get(path).set('x-api-key', owner.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.data).toBeUndefined();
      return res.body;
    };
    const projectSlots = (await view(`/projects/${session.projectId}/effective-config`)).model_slots;
    expect(projectSlots[0]).toEqual({
      slot: '*',
      source: 'global_profile',
      scope: 'global',
      profile_id: global.id,
      override_id: null,
      preset_name: global.preset_name,
      provider: 'openai',
      model_id: 'global',
      base_url: 'https://g.example.com',
      params: { temperature: 0.4, top_p: null },
      field_sources: {
        provider: 'profile',
        model_id: 'profile',
        base_url: 'profile',
        params: 'global_profile',
      },
    });
    expect(projectSlots[1]).toMatchObject({
      slot: 'narrator',
      source: 'global_profile',
      profile_id: narrator.id,
    });
    // The Project view has no session: the session binding is not there.
    expect(projectSlots[4]).toMatchObject({
      slot: 'memory',
      source: 'global_profile',
      profile_id: global.id,
    });

    const sessionSlots = (await view(`/sessions/${session.id}/effective-config`)).model_slots;
    expect(sessionSlots[4]).toMatchObject({
      slot: 'memory',
      source: 'session_profile',
      scope: 'session',
      profile_id: local.id,
    });

    const base = await createProfile(t, owner.apiKey, { model_id: 'base' });
    await t.http
      .put(`/projects/${session.projectId}/settings/llm-profile-override`)
      .set('x-api-key', owner.apiKey)
      .send({ base_profile_id: base.id })
      .expect(200);
    const withOverride = (await view(`/sessions/${session.id}/effective-config`)).model_slots;
    expect(withOverride.map((s: { source: string }) => s.source)).toEqual([
      'project_override',
      'project_override',
      'project_override',
      'project_override',
      'session_profile',
    ]);

    await tamperProfileKey(t, local.id);
    const tampered = await view(`/sessions/${session.id}/effective-config`);
    expect(tampered.model_slots[4]).toMatchObject({ source: 'project_override' });
    expect(tampered.warnings).toEqual([
      expect.objectContaining({ code: 'secret_invalid_format', profile_id: local.id }),
    ]);
  });
});
