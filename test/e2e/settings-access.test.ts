import type { ProjectRow, SessionRow } from '@hearth/persistence';
import { createSessionRow } from '../support/factories/events';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import {
  createLlmProfile,
  createMcpServer,
  createToolPolicy,
  settingsJournal,
} from '../support/factories/settings';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: Record<string, any> };

/**
 * Spec 1 "Access by role" for settings overrides and the effective-config views, cell by cell:
 * `project.config.read` for every member, `project.config.write` for the owner only (403
 * `project_access_denied`), non-members and other accounts 404 (`project_not_found` on Project
 * routes, `not_found` on the legacy session route). A refused PUT writes nothing.
 */
describe('Project settings: access by role', () => {
  let t: TestApp;
  let owner: Caller;
  let observer: Caller;
  let deriver: Caller;
  let outsider: Caller;
  let ownerClient: Caller;
  let deriverClient: Caller;
  let observerClient: Caller;
  let project: ProjectRow;
  let session: SessionRow;
  let bodies: Record<string, unknown>;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    outsider = await createAccountCaller(t, { name: 'Outsider' });
    ownerClient = await createClientCaller(t, owner.accountId, 'Not a member');
    deriverClient = await createClientCaller(t, owner.accountId, 'Deriver client');
    observerClient = await createClientCaller(t, outsider.accountId, 'Observer client of another account');
    project = await createProject(t, { accountId: owner.accountId });
    session = await createSessionRow(t, project);
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
    await addMember(t, project, deriverClient, 'deriver', { as: 'client' });
    await addMember(t, project, observerClient, 'observer', { as: 'client' });
    const profile = await createLlmProfile(t, owner.accountId);
    const server = await createMcpServer(t, owner.apiKey, { tools: ['search'] });
    const policy = await createToolPolicy(t, owner.apiKey);
    bodies = {
      'llm-profile-override': { base_profile_id: profile.id },
      'mcp-bindings': { mcp_server_id: server.id },
      'tool-policy-overrides': { base_policy_id: policy.id },
    };
  });
  afterAll(async () => {
    await t.close();
  });

  const paths = ['llm-profile-override', 'mcp-bindings', 'tool-policy-overrides'];

  /** Every route for one caller, as `route: status code`. */
  async function row(key: string, p: ProjectRow = project): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const show = (res: Res) => `${res.status}${res.body.error ? ` ${res.body.error.code}` : ''}`;
    for (const path of paths) {
      out[`GET ${path}`] = show(await t.http.get(`/projects/${p.id}/settings/${path}`).set('x-api-key', key));
      const before = await settingsJournal(t, p);
      const res = await t.http
        .put(`/projects/${p.id}/settings/${path}`)
        .set('x-api-key', key)
        .send(bodies[path] as object);
      out[`PUT ${path}`] = show(res);
      if (res.status !== 200) expect(await settingsJournal(t, p)).toEqual(before);
    }
    out['GET project effective-config'] = show(
      await t.http.get(`/projects/${p.id}/effective-config`).set('x-api-key', key),
    );
    out['GET session effective-config'] = show(
      await t.http.get(`/sessions/${session.id}/effective-config`).set('x-api-key', key),
    );
    return out;
  }

  const table = (read: string, write: string, sessionRead = read) => ({
    'GET llm-profile-override': read,
    'PUT llm-profile-override': write,
    'GET mcp-bindings': read,
    'PUT mcp-bindings': write,
    'GET tool-policy-overrides': read,
    'PUT tool-policy-overrides': write,
    'GET project effective-config': read,
    'GET session effective-config': sessionRead,
  });

  it('owner: reads and writes', async () => {
    expect(await row(owner.apiKey)).toEqual(table('200', '200'));
  });

  it.each([
    ['observer (account)', () => observer],
    ['deriver (account)', () => deriver],
    ['deriver (Client member)', () => deriverClient],
    ['observer (Client of another account)', () => observerClient],
  ])('%s: reads, 403 project_access_denied on writes', async (_name, who) => {
    expect(await row(who().apiKey)).toEqual(table('200', '403 project_access_denied'));
  });

  it.each([
    ['non-member account', () => outsider],
    ["owner's non-default Client, not a member", () => ownerClient],
  ])('%s: 404 everywhere', async (_name, who) => {
    expect(await row(who().apiKey)).toEqual(
      table('404 project_not_found', '404 project_not_found', '404 not_found'),
    );
  });

  it('another account’s Project and session answer 404 on every route', async () => {
    const foreign = await createProject(t, { accountId: outsider.accountId });
    const foreignSession = await createSessionRow(t, foreign);
    for (const path of paths) {
      const read = await t.http
        .get(`/projects/${foreign.id}/settings/${path}`)
        .set('x-api-key', owner.apiKey);
      const write = await t.http
        .put(`/projects/${foreign.id}/settings/${path}`)
        .set('x-api-key', owner.apiKey)
        .send(bodies[path] as object);
      expect([read.status, read.body.error.code, write.status, write.body.error.code]).toEqual([
        404,
        'project_not_found',
        404,
        'project_not_found',
      ]);
    }
    const eff = await t.http.get(`/projects/${foreign.id}/effective-config`).set('x-api-key', owner.apiKey);
    expect([eff.status, eff.body.error.code]).toEqual([404, 'project_not_found']);
    const sess = await t.http
      .get(`/sessions/${foreignSession.id}/effective-config`)
      .set('x-api-key', owner.apiKey);
    expect([sess.status, sess.body.error.code]).toEqual([404, 'not_found']);
    const missing = await t.http.get(`/sessions/ses_missing/effective-config`).set('x-api-key', owner.apiKey);
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
  });

  it('project.settings_updated events are owner-visible only', async () => {
    const put = await t.http
      .put(`/projects/${project.id}/settings/mcp-bindings`)
      .set('x-api-key', owner.apiKey)
      .send({ ...(bodies['mcp-bindings'] as object), config_override_json: { visibility_check: true } });
    expect(put.status).toBe(200);
    const events = await t.http.get(`/projects/${project.id}/events`).set('x-api-key', observer.apiKey);
    expect(events.body.items.filter((e: { type: string }) => e.type === 'project.settings_updated')).toEqual(
      [],
    );
    const ownerEvents = await t.http.get(`/projects/${project.id}/events`).set('x-api-key', owner.apiKey);
    expect(
      ownerEvents.body.items.filter((e: { type: string }) => e.type === 'project.settings_updated').length,
    ).toBeGreaterThan(0);
  });
});
