import { projectEventRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { createLlmProfile, createMcpServer, createToolPolicy } from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';

/** Settings overrides, the registries and effective config on the embedded adapters (PGlite, in-process bus). */
describe('Project settings, embedded mode', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
    owner = await createAccountCaller(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('upserts the three overrides and shows them in the effective config', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const profile = await createLlmProfile(t, owner.accountId, { model_id: 'embedded-model' });
    const server = await createMcpServer(t, owner.apiKey, { tools: ['a', 'b'] });
    const policy = await createToolPolicy(t, owner.apiKey, { policy_json: { mode: 'deny', tools: ['b'] } });
    const settings = `/projects/${project.id}/settings`;
    const put = (path: string, body: object) =>
      t.http.put(`${settings}/${path}`).set('x-api-key', owner.apiKey).send(body).expect(200);
    await put('llm-profile-override', { base_profile_id: profile.id });
    await put('llm-profile-override', {
      base_profile_id: profile.id,
      override_json: { params: { top_k: 5 } },
    });
    await put('mcp-bindings', { mcp_server_id: server.id, allowed_tools: ['a', 'b', 'a'] });
    await put('tool-policy-overrides', { base_policy_id: policy.id });
    expect(
      (await t.http.get(`${settings}/mcp-bindings`).set('x-api-key', owner.apiKey).expect(200)).body.items[0]
        .allowed_tools,
    ).toEqual(['a', 'b']);
    const view = (
      await t.http.get(`/projects/${project.id}/effective-config`).set('x-api-key', owner.apiKey).expect(200)
    ).body;
    expect(view.model_slots[0]).toMatchObject({
      source: 'project_override',
      model_id: 'embedded-model',
      params: { top_k: 5 },
    });
    expect(view.mcp_bindings[0].permitted_tools).toEqual({ value: ['a'], source: 'tool_policy' });
    expect((await projectEventRows(t, project.id)).map((e) => e.type)).toEqual([
      'project.settings_updated',
      'project.settings_updated',
      'project.settings_updated',
      'project.settings_updated',
    ]);
    const refused = await t.http
      .delete(`/mcp-servers/${server.id}`)
      .set('x-api-key', owner.apiKey)
      .expect(409);
    expect(refused.body.error.code).toBe('mcp_server_in_use');
  });
});
