import type { LlmProfileRow, ProjectRow } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { archiveProject, createProject, findProject } from '../support/factories/projects';
import {
  createLlmProfile,
  createMcpServer,
  createToolPolicy,
  settingsJournal,
} from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: Record<string, any> };

/**
 * Spec 1 "Project settings overrides": envelopes, upsert keys, defaults, validity of what the
 * overrides point at, every error code, and the journal (log, owner event, settings_override mirror)
 * of each PUT in its transaction. A refused PUT changes nothing.
 */
describe('Project settings overrides', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let project: ProjectRow;
  let profile: LlmProfileRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other account' });
    project = await createProject(t, { accountId: owner.accountId });
    profile = await createLlmProfile(t, owner.accountId, { provider: 'anthropic', model_id: 'claude-x' });
  });
  afterAll(async () => {
    await t.close();
  });

  const url = (path: string, p: Pick<ProjectRow, 'id'> = project) => `/projects/${p.id}/settings/${path}`;
  const put = (path: string, body: unknown, key = owner.apiKey, p: Pick<ProjectRow, 'id'> = project) =>
    t.http
      .put(url(path, p))
      .set('x-api-key', key)
      .send(body as object);
  const get = (path: string, key = owner.apiKey, p: Pick<ProjectRow, 'id'> = project) =>
    t.http.get(url(path, p)).set('x-api-key', key);

  /** A PUT that must fail with this status and code and leave every settings row, log and event as it was. */
  async function refused(
    send: () => PromiseLike<Res>,
    status: number,
    code: string,
    p: ProjectRow = project,
  ) {
    const before = await settingsJournal(t, p);
    const res = await send();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    expect(await settingsJournal(t, p)).toEqual(before);
    return res;
  }

  describe('LLM profile override', () => {
    it('answers {item: null} before any write', async () => {
      const fresh = await createProject(t, { accountId: owner.accountId });
      const res = await get('llm-profile-override', owner.apiKey, fresh);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ item: null });
    });

    it('upserts one record per Project, answers it bare, defaults override_json to {}', async () => {
      const p = await createProject(t, { accountId: owner.accountId });
      const first = await put('llm-profile-override', { base_profile_id: profile.id }, owner.apiKey, p);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        id: expect.stringMatching(/^pllmo_/),
        workspace_id: p.workspace_id,
        project_id: p.id,
        base_profile_id: profile.id,
        override_json: {},
        status: 'active',
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      const second = await put(
        'llm-profile-override',
        {
          base_profile_id: profile.id,
          override_json: { model_id: 'claude-y', params: { temperature: 0.5 } },
        },
        owner.apiKey,
        p,
      );
      expect(second.status).toBe(200);
      expect(second.body.id).toBe(first.body.id);
      expect(second.body.created_at).toBe(first.body.created_at);
      expect(second.body.override_json).toEqual({ model_id: 'claude-y', params: { temperature: 0.5 } });
      const read = await get('llm-profile-override', owner.apiKey, p);
      expect(read.body).toEqual({ item: second.body });
      expect((await settingsJournal(t, p)).llm?.id).toBe(first.body.id);
    });

    it('writes the log, an owner event and the settings_override mirror in one go', async () => {
      const p = await createProject(t, { accountId: owner.accountId });
      const res = await put('llm-profile-override', { base_profile_id: profile.id }, owner.apiKey, p);
      const events = await projectEventRows(t, p.id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'project.settings_updated',
        visibility: 'owner',
        payload: {
          setting_kind: 'llm_profile_override',
          record_id: res.body.id,
          base_profile_id: profile.id,
          created: true,
          changed_fields: ['base_profile_id', 'override_json', 'status'],
        },
      });
      const logs = await projectLogRows(t, p);
      expect(logs.map((l) => l.action)).toEqual(['project_settings.llm_profile_override.put']);
      expect(logs[0]).toMatchObject({ target_id: res.body.id, project_id: p.id });
      expect(events[0].operation_log_id).toBe(logs[0].id);
      const row = await findProject(t, p.id);
      expect(row?.settings_override).toEqual({
        llm_profile_override: {
          id: res.body.id,
          base_profile_id: profile.id,
          override_json: {},
          status: 'active',
          created_at: res.body.created_at,
          updated_at: res.body.updated_at,
        },
        mcp_bindings: [],
        tool_policy_overrides: [],
      });
      const detail = await t.http.get(`/projects/${p.id}`).set('x-api-key', owner.apiKey);
      expect(detail.body.settings_override).toEqual(row?.settings_override);

      // The same PUT again changes nothing and writes nothing.
      const again = await put(
        'llm-profile-override',
        { base_profile_id: profile.id, override_json: {} },
        owner.apiKey,
        p,
      );
      expect(again.body).toEqual(res.body);
      expect(await projectEventRows(t, p.id)).toHaveLength(1);

      // A change names only the changed fields.
      await put(
        'llm-profile-override',
        { base_profile_id: profile.id, override_json: { provider: 'openai' } },
        owner.apiKey,
        p,
      );
      const last = (await projectEventRows(t, p.id)).at(-1);
      expect(last?.payload).toMatchObject({ created: false, changed_fields: ['override_json'] });
    });

    it('refuses unknown, deleted and other-account profiles (404 profile_not_found)', async () => {
      const deleted = await createLlmProfile(t, owner.accountId, { status: 'deleted' });
      const foreign = await createLlmProfile(t, other.accountId);
      for (const id of ['llmp_missing', deleted.id, foreign.id]) {
        await refused(() => put('llm-profile-override', { base_profile_id: id }), 404, 'profile_not_found');
      }
    });

    it('refuses a disabled profile (409 profile_disabled)', async () => {
      const disabled = await createLlmProfile(t, owner.accountId, { status: 'disabled' });
      await refused(
        () => put('llm-profile-override', { base_profile_id: disabled.id }),
        409,
        'profile_disabled',
      );
    });

    it.each([
      [{ override_json: { base_url: 'https://x' } }, 'override_json.base_url'],
      [{ override_json: { provider: 'nope' } }, 'override_json.provider'],
      [{ override_json: { model_id: '' } }, 'override_json.model_id'],
      [{ override_json: { params: { temperature: 2.5 } } }, 'override_json.params.temperature'],
      [{ override_json: { params: { max_retries: 11 } } }, 'override_json.params.max_retries'],
      [{ override_json: { params: { top_k: 1.5 } } }, 'override_json.params.top_k'],
      [{ override_json: { params: { seed: 1 } } }, 'override_json.params.seed'],
      [{ override_json: [] }, 'override_json'],
      [{ override_json: 'x' }, 'override_json'],
      [{ base_profile_id: 42 }, 'base_profile_id'],
      [{ surprise: true }, 'surprise'],
    ])('refuses %j with 400 validation_error naming %s', async (patch, field) => {
      const res = await refused(
        () => put('llm-profile-override', { base_profile_id: profile.id, ...patch }),
        400,
        'validation_error',
      );
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('accepts the limits of binding params and null params', async () => {
      const p = await createProject(t, { accountId: owner.accountId });
      const res = await put(
        'llm-profile-override',
        {
          base_profile_id: profile.id,
          override_json: {
            params: {
              temperature: 2,
              top_p: 0,
              max_retries: 10,
              frequency_penalty: -2,
              reasoning_effort: 'high',
              stream: null,
            },
          },
        },
        owner.apiKey,
        p,
      );
      expect(res.status).toBe(200);
    });

    it('requires base_profile_id', async () => {
      await refused(() => put('llm-profile-override', {}), 400, 'validation_error');
    });

    it('keeps override_json as written: top-level binding params apply, other keys are kept and ignored', async () => {
      // Spec 1: override_json is any object (default {}); only its known keys are checked.
      const p = await createProject(t, { accountId: owner.accountId });
      const written = {
        temperature: 0.4,
        top_p: null,
        max_tokens: 300,
        note: { by: 'test' },
        params: { top_k: 5 },
      };
      const res = await put(
        'llm-profile-override',
        { base_profile_id: profile.id, override_json: written },
        owner.apiKey,
        p,
      );
      expect(res.status).toBe(200);
      expect(res.body.override_json).toEqual(written);
      expect((await get('llm-profile-override', owner.apiKey, p)).body.item.override_json).toEqual(written);
      const effective = await t.http.get(`/projects/${p.id}/effective-config`).set('x-api-key', owner.apiKey);
      expect(effective.status).toBe(200);
      const narrator = effective.body.model_slots.find((s: { slot: string }) => s.slot === 'narrator');
      expect(narrator).toMatchObject({
        source: 'project_override',
        provider: 'anthropic',
        model_id: 'claude-x',
        params: { temperature: 0.4, top_k: 5 },
      });
      // `params` wins over a top-level param of the same name.
      await put(
        'llm-profile-override',
        { base_profile_id: profile.id, override_json: { temperature: 0.4, params: { temperature: 1.5 } } },
        owner.apiKey,
        p,
      ).expect(200);
      const again = await t.http.get(`/projects/${p.id}/effective-config`).set('x-api-key', owner.apiKey);
      expect(again.body.model_slots.find((s: { slot: string }) => s.slot === 'narrator').params).toEqual({
        temperature: 1.5,
      });
    });

    it.each([
      [{ temperature: 2.5 }, 'override_json.temperature'],
      [{ max_retries: 'x' }, 'override_json.max_retries'],
      [{ api_key: 'sk-secret' }, 'override_json.api_key'],
    ])('refuses the top-level override_json %j naming %s', async (overrideJson, field) => {
      const res = await refused(
        () => put('llm-profile-override', { base_profile_id: profile.id, override_json: overrideJson }),
        400,
        'validation_error',
      );
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    });
  });

  describe('tool policy overrides', () => {
    it('upserts one record per base_policy_id with defaults', async () => {
      const p = await createProject(t, { accountId: owner.accountId });
      const policy = await createToolPolicy(t, owner.apiKey, {
        policy_json: { mode: 'deny', tools: ['rm'] },
      });
      expect((await get('tool-policy-overrides', owner.apiKey, p)).body).toEqual({ items: [] });
      const first = await put('tool-policy-overrides', { base_policy_id: policy.id }, owner.apiKey, p);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        id: expect.stringMatching(/^ptpo_/),
        workspace_id: p.workspace_id,
        project_id: p.id,
        base_policy_id: policy.id,
        override_json: {},
        status: 'active',
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      const second = await put(
        'tool-policy-overrides',
        { base_policy_id: policy.id, override_json: { tools: ['rm', 'dd'] }, status: 'archived' },
        owner.apiKey,
        p,
      );
      expect(second.body).toMatchObject({
        id: first.body.id,
        status: 'archived',
        override_json: { tools: ['rm', 'dd'] },
      });
      const list = await get('tool-policy-overrides', owner.apiKey, p);
      expect(list.body).toEqual({ items: [second.body] });
      const mirror = (await findProject(t, p.id))?.settings_override as { tool_policy_overrides: unknown[] };
      expect(mirror.tool_policy_overrides).toEqual([
        expect.objectContaining({ id: first.body.id, status: 'archived' }),
      ]);
      expect((await projectLogRows(t, p)).map((l) => l.action)).toEqual([
        'project_settings.tool_policy_override.put',
        'project_settings.tool_policy_override.put',
      ]);
    });

    it('refuses unknown and other-account policies (404 tool_policy_not_found)', async () => {
      const foreign = await createToolPolicy(t, other.apiKey);
      for (const id of ['tpol_missing', foreign.id]) {
        await refused(
          () => put('tool-policy-overrides', { base_policy_id: id }),
          404,
          'tool_policy_not_found',
        );
      }
    });

    it('refuses an active override of an archived policy (409 tool_policy_archived)', async () => {
      const policy = await createToolPolicy(t, owner.apiKey, { status: 'archived' });
      await refused(
        () => put('tool-policy-overrides', { base_policy_id: policy.id }),
        409,
        'tool_policy_archived',
      );
    });

    it.each([
      [{ override_json: { mode: 'maybe' } }, 'override_json.mode'],
      [{ override_json: { tools: ['a', 'a'] } }, 'override_json.tools'],
      [{ override_json: { extra: 1 } }, 'override_json.extra'],
      [{ status: 'deleted' }, 'status'],
    ])('refuses %j with 400 validation_error', async (patch, field) => {
      const policy = await createToolPolicy(t, owner.apiKey);
      const res = await refused(
        () => put('tool-policy-overrides', { base_policy_id: policy.id, ...patch }),
        400,
        'validation_error',
      );
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });
  });

  it('answers 409 project_archived on every settings route of an archived Project', async () => {
    const p = await createProject(t, { accountId: owner.accountId });
    const server = await createMcpServer(t, owner.apiKey);
    const policy = await createToolPolicy(t, owner.apiKey);
    await archiveProject(t, p.id);
    const archived = (await findProject(t, p.id)) as ProjectRow;
    for (const path of ['llm-profile-override', 'mcp-bindings', 'tool-policy-overrides']) {
      const res = await get(path, owner.apiKey, p);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({
        path,
        status: 409,
        code: 'project_archived',
      });
    }
    await refused(
      () => put('llm-profile-override', { base_profile_id: profile.id }, owner.apiKey, p),
      409,
      'project_archived',
      archived,
    );
    await refused(
      () => put('mcp-bindings', { mcp_server_id: server.id }, owner.apiKey, p),
      409,
      'project_archived',
      archived,
    );
    await refused(
      () => put('tool-policy-overrides', { base_policy_id: policy.id }, owner.apiKey, p),
      409,
      'project_archived',
      archived,
    );
  });
});
