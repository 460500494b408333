import type { ProjectRow } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject, findProject } from '../support/factories/projects';
import { createMcpServer, settingsJournal } from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: Record<string, any> };

/**
 * Spec 1 "Project MCP binding": one record per mcp_server_id, defaults, duplicate removal, the
 * server catalog check and every error code. A refused PUT changes nothing.
 */
describe('Project settings overrides: MCP bindings', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other account' });
    project = await createProject(t, { accountId: owner.accountId });
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

  describe('MCP bindings', () => {
    it('concurrent settings writes on one Project, and other writes beside them, all land (they took turns, no deadlock)', async () => {
      const p = await createProject(t, { accountId: owner.accountId });
      const servers = await Promise.all(
        Array.from({ length: 4 }, () => createMcpServer(t, owner.apiKey, { tools: ['search'] })),
      );
      const results = await Promise.all([
        ...servers.map((server) => put('mcp-bindings', { mcp_server_id: server.id }, owner.apiKey, p)),
        ...Array.from({ length: 4 }, (_, i) =>
          t.http
            .post(`/projects/${p.id}/inbox`)
            .set('x-api-key', owner.apiKey)
            .send({ kind: 'race', title: `#${i}` }),
        ),
        ...Array.from({ length: 4 }, (_, i) =>
          t.http
            .post(`/projects/${p.id}/derived-outputs`)
            .set('x-api-key', owner.apiKey)
            .send({ domain: 'race', value: { i } }),
        ),
      ]);
      expect(results.map((r) => r.status)).toEqual([...Array(4).fill(200), ...Array(8).fill(201)]);
      const list = await get('mcp-bindings', owner.apiKey, p);
      expect(list.body.items.map((b: { mcp_server_id: string }) => b.mcp_server_id).sort()).toEqual(
        servers.map((server) => server.id).sort(),
      );
      const events = await projectEventRows(t, p.id);
      expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    });

    it('upserts one record per mcp_server_id, defaults and duplicate removal', async () => {
      const p = await createProject(t, { accountId: owner.accountId });
      const server = await createMcpServer(t, owner.apiKey, { tools: ['search', 'fetch', 'write'] });
      const empty = await get('mcp-bindings', owner.apiKey, p);
      expect(empty.body).toEqual({ items: [] });
      const first = await put('mcp-bindings', { mcp_server_id: server.id }, owner.apiKey, p);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        id: expect.stringMatching(/^pmcpb_/),
        workspace_id: p.workspace_id,
        project_id: p.id,
        mcp_server_id: server.id,
        status: 'enabled',
        allowed_tools: [],
        config_override_json: {},
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      const second = await put(
        'mcp-bindings',
        {
          mcp_server_id: server.id,
          allowed_tools: ['fetch', 'search', 'fetch'],
          config_override_json: { region: 'eu' },
        },
        owner.apiKey,
        p,
      );
      expect(second.body).toMatchObject({
        id: first.body.id,
        allowed_tools: ['fetch', 'search'],
        config_override_json: { region: 'eu' },
      });
      const other2 = await createMcpServer(t, owner.apiKey, { tools: ['x'] });
      await put('mcp-bindings', { mcp_server_id: other2.id, status: 'disabled' }, owner.apiKey, p);
      const list = await get('mcp-bindings', owner.apiKey, p);
      expect(
        list.body.items.map((b: { mcp_server_id: string; status: string }) => [b.mcp_server_id, b.status]),
      ).toEqual([
        [server.id, 'enabled'],
        [other2.id, 'disabled'],
      ]);
      expect(list.body.items[0]).toEqual(second.body);
      const mirror = (await findProject(t, p.id))?.settings_override as { mcp_bindings: unknown[] };
      expect(mirror.mcp_bindings).toHaveLength(2);
      const events = await projectEventRows(t, p.id);
      expect(events.map((e) => (e.payload as { setting_kind: string }).setting_kind)).toEqual([
        'mcp_binding',
        'mcp_binding',
        'mcp_binding',
      ]);
      expect((await projectLogRows(t, p)).map((l) => l.action)).toEqual([
        'project_settings.mcp_binding.put',
        'project_settings.mcp_binding.put',
        'project_settings.mcp_binding.put',
      ]);
    });

    it('refuses tools outside the catalog, naming them (400 validation_error)', async () => {
      const server = await createMcpServer(t, owner.apiKey, { tools: ['search'] });
      const res = await refused(
        () => put('mcp-bindings', { mcp_server_id: server.id, allowed_tools: ['search', 'rm', 'dd'] }),
        400,
        'validation_error',
      );
      expect(res.body.error.details.unknown_tools).toEqual(['rm', 'dd']);
      expect(res.body.error.details.fields[0].field).toBe('allowed_tools');
    });

    it('refuses unknown and other-account servers (404 mcp_server_not_found)', async () => {
      const foreign = await createMcpServer(t, other.apiKey);
      for (const id of ['mcp_missing', foreign.id]) {
        await refused(() => put('mcp-bindings', { mcp_server_id: id }), 404, 'mcp_server_not_found');
      }
    });

    it('refuses enabling a binding of a disabled server (409 mcp_server_disabled), allows a disabled one', async () => {
      const server = await createMcpServer(t, owner.apiKey, { status: 'disabled' });
      await refused(() => put('mcp-bindings', { mcp_server_id: server.id }), 409, 'mcp_server_disabled');
      const p = await createProject(t, { accountId: owner.accountId });
      const res = await put(
        'mcp-bindings',
        { mcp_server_id: server.id, status: 'disabled' },
        owner.apiKey,
        p,
      );
      expect(res.status).toBe(200);
    });

    it('takes 200 allowed tools and refuses 201', async () => {
      const tools = Array.from({ length: 200 }, (_, i) => `tool_${i}`);
      const server = await createMcpServer(t, owner.apiKey, { tools });
      const p = await createProject(t, { accountId: owner.accountId });
      expect(
        (await put('mcp-bindings', { mcp_server_id: server.id, allowed_tools: tools }, owner.apiKey, p))
          .status,
      ).toBe(200);
      await refused(
        () => put('mcp-bindings', { mcp_server_id: server.id, allowed_tools: [...tools, 'tool_0'] }),
        400,
        'validation_error',
      );
    });

    it.each([
      [{ status: 'on' }, 'status'],
      [{ allowed_tools: 'search' }, 'allowed_tools'],
      [{ allowed_tools: [''] }, 'allowed_tools'],
      [{ config_override_json: [1] }, 'config_override_json'],
      [{ extra: 1 }, 'extra'],
    ])('refuses %j with 400 validation_error', async (patch, field) => {
      const server = await createMcpServer(t, owner.apiKey, { tools: ['search'] });
      const res = await refused(
        () => put('mcp-bindings', { mcp_server_id: server.id, ...patch }),
        400,
        'validation_error',
      );
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });
  });
});
