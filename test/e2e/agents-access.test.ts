import type { ProjectRow } from '@hearth/persistence';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { archiveProject, createProject } from '../support/factories/projects';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  agentState,
  createAgentType,
  createBinding,
  defaultWorkspace,
  outcome,
  runBinding,
  type Json,
  type Res,
} from './agents-support';

/**
 * Spec 1 "Access by role" for agents, cell by cell: Agent Types are for account actors only (a
 * non-default Client gets 403 `agent_type_account_only` first) and only in the caller's own
 * Workspaces (404 `not_found`, `agent_type_not_found` on a type's routes); bindings and jobs are read by every member (`project.agent.read`),
 * managed and run by the owner (`project.agent.manage`, `project.agent.run`; others 403
 * `project_access_denied`), hidden from non-members (404 `project_not_found`). Another account's
 * type, binding and job answer 404 without their data; a refused request writes nothing. An
 * archived Project refuses writes with 409 `project_archived` and still answers reads.
 */
describe('Agents: access', () => {
  let t: TestApp;
  let owner: Caller;
  let observer: Caller;
  let deriver: Caller;
  let deriverClient: Caller;
  let outsider: Caller;
  let ownerClient: Caller;
  let ws: string;
  let type: Json;
  let project: ProjectRow;
  let binding: Json;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    outsider = await createAccountCaller(t, { name: 'Outsider' });
    ownerClient = await createClientCaller(t, owner.accountId, 'Not a member');
    deriverClient = await createClientCaller(t, owner.accountId, 'Deriver client');
    ws = (await defaultWorkspace(t, owner.accountId)).id;
    type = await createAgentType(t, owner.apiKey, ws, {
      defaults: { grants: { allowed_output_targets: ['derived_output'] } },
    });
    project = await createProject(t, { accountId: owner.accountId });
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
    await addMember(t, project, deriverClient, 'deriver', { as: 'client' });
    binding = await createBinding(t, owner.apiKey, project.id, { agent_type_id: type.id });
  });
  afterAll(async () => {
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  /** Every binding and job route for one caller, as `route: outcome`; a refused write changes nothing. */
  async function row(
    key: string,
    p: ProjectRow = project,
    b: Json = binding,
    pendingJobId?: string,
  ): Promise<Record<string, string>> {
    const jobId = pendingJobId ?? ((await runBinding(t, owner.apiKey, p.id, b.id)).job_id as string);
    const at = `/projects/${p.id}`;
    const routes: Array<[string, () => PromiseLike<Res>, boolean]> = [
      ['GET bindings', () => t.http.get(`${at}/agent-bindings`).set('x-api-key', key), false],
      ['GET binding', () => t.http.get(`${at}/agent-bindings/${b.id}`).set('x-api-key', key), false],
      [
        'POST binding',
        () => t.http.post(`${at}/agent-bindings`).set('x-api-key', key).send({ agent_type_id: type.id }),
        true,
      ],
      [
        'PATCH binding',
        () =>
          t.http
            .patch(`${at}/agent-bindings/${b.id}`)
            .set('x-api-key', key)
            .send({ metadata: { by: key.slice(-6) } }),
        true,
      ],
      ['disable', () => t.http.post(`${at}/agent-bindings/${b.id}/disable`).set('x-api-key', key), true],
      ['enable', () => t.http.post(`${at}/agent-bindings/${b.id}/enable`).set('x-api-key', key), true],
      ['run', () => t.http.post(`${at}/agent-bindings/${b.id}/run`).set('x-api-key', key).send({}), true],
      ['GET jobs', () => t.http.get(`${at}/agent-jobs`).set('x-api-key', key), false],
      ['GET job', () => t.http.get(`${at}/agent-jobs/${jobId}`).set('x-api-key', key), false],
      ['cancel', () => t.http.post(`${at}/agent-jobs/${jobId}/cancel`).set('x-api-key', key), true],
    ];
    const out: Record<string, string> = {};
    for (const [name, send, write] of routes) {
      const before = await agentState(t);
      const res = await send();
      out[name] = outcome(res);
      if (res.status >= 400) {
        expect(await agentState(t)).toEqual(before);
        if (write) expect(JSON.stringify(res.body)).not.toContain(b.id);
      }
    }
    return out;
  }

  const table = (read: string, write: string, created = write, ran = write) => ({
    'GET bindings': read,
    'GET binding': read,
    'POST binding': created,
    'PATCH binding': write,
    disable: write,
    enable: write,
    run: ran,
    'GET jobs': read,
    'GET job': read,
    cancel: write,
  });

  it('owner: reads, manages, runs and cancels', async () => {
    expect(await row(owner.apiKey)).toEqual(table('200', '200', '201', '202'));
  });

  it.each([
    ['observer (account)', () => observer],
    ['deriver (account)', () => deriver],
    ['deriver (Client member)', () => deriverClient],
  ])('%s: reads; 403 project_access_denied on manage, run and cancel', async (_name, who) => {
    expect(await row(who().apiKey)).toEqual(table('200', '403 project_access_denied'));
  });

  it.each([
    ['non-member account', () => outsider],
    ["owner's non-default Client, not a member", () => ownerClient],
  ])('%s: 404 project_not_found everywhere', async (_name, who) => {
    const hidden = '404 project_not_found';
    expect(await row(who().apiKey)).toEqual(table(hidden, hidden));
  });

  describe('Agent Type routes', () => {
    const typeRoutes = (
      workspaceId: string,
      typeId: string,
    ): Array<[string, (key: string) => PromiseLike<Res>]> => {
      const at = `/workspaces/${workspaceId}/agent-types`;
      return [
        ['list', (key) => t.http.get(at).set('x-api-key', key)],
        ['detail', (key) => t.http.get(`${at}/${typeId}`).set('x-api-key', key)],
        [
          'create',
          (key) =>
            t.http
              .post(at)
              .set('x-api-key', key)
              .send({ key: 'fresh', name: 'Fresh', scope_kind: 'project' }),
        ],
        [
          'patch',
          (key) => t.http.patch(`${at}/${typeId}`).set('x-api-key', key).send({ name: 'Taken over' }),
        ],
        ['disable', (key) => t.http.post(`${at}/${typeId}/disable`).set('x-api-key', key)],
        ['enable', (key) => t.http.post(`${at}/${typeId}/enable`).set('x-api-key', key)],
      ];
    };

    async function outcomes(key: string, workspaceId: string, typeId: string) {
      const out: Record<string, string> = {};
      for (const [name, send] of typeRoutes(workspaceId, typeId)) {
        const before = await agentState(t);
        const res = await send(key);
        out[name] = outcome(res);
        if (res.status >= 400) expect(await agentState(t)).toEqual(before);
        expect(JSON.stringify(res.body)).not.toContain(type.key);
      }
      return out;
    }

    const all = (value: string) =>
      Object.fromEntries(['list', 'detail', 'create', 'patch', 'disable', 'enable'].map((k) => [k, value]));

    it('a non-default Client: 403 agent_type_account_only on every route, before anything is looked up', async () => {
      for (const client of [ownerClient, deriverClient]) {
        expect(await outcomes(client.apiKey, ws, type.id)).toEqual(all('403 agent_type_account_only'));
        expect(await outcomes(client.apiKey, 'ws_missing', 'agt_missing')).toEqual(
          all('403 agent_type_account_only'),
        );
        // Before the body is validated too: a malformed create or patch is still the 403.
        const at = `/workspaces/${ws}/agent-types`;
        for (const res of [
          await t.http.post(at).set('x-api-key', client.apiKey).send({ key: '', bogus: 1 }),
          await t.http.patch(`${at}/${type.id}`).set('x-api-key', client.apiKey).send({ name: 7 }),
        ])
          expect(outcome(res)).toBe('403 agent_type_account_only');
      }
    });

    it('another account’s Workspace: 404 on every route, nothing revealed; the type routes say agent_type_not_found', async () => {
      // Spec 1 "Errors": agent_type_not_found is "missing or not of this account"; the Workspace
      // routes without a type (list, create) answer the generic not_found.
      const expected = {
        list: '404 not_found',
        create: '404 not_found',
        detail: '404 agent_type_not_found',
        patch: '404 agent_type_not_found',
        disable: '404 agent_type_not_found',
        enable: '404 agent_type_not_found',
      };
      expect(await outcomes(outsider.apiKey, ws, type.id)).toEqual(expected);
      expect(await outcomes(owner.apiKey, 'ws_missing', type.id)).toEqual(expected);
    });

    it('another account’s type through one’s own Workspace: 404 agent_type_not_found', async () => {
      const outsiderWs = (await defaultWorkspace(t, outsider.accountId)).id;
      const res = await outcomes(outsider.apiKey, outsiderWs, type.id);
      expect(res).toEqual({
        list: '200',
        create: '201',
        detail: '404 agent_type_not_found',
        patch: '404 agent_type_not_found',
        disable: '404 agent_type_not_found',
        enable: '404 agent_type_not_found',
      });
    });
  });

  it('another account’s binding and job through one’s own Project: 404, nothing revealed', async () => {
    const bobWs = (await defaultWorkspace(t, outsider.accountId)).id;
    const bobType = await createAgentType(t, outsider.apiKey, bobWs);
    const bobProject = await createProject(t, { accountId: outsider.accountId });
    const bobBinding = await createBinding(t, outsider.apiKey, bobProject.id, { agent_type_id: bobType.id });
    const bobJob = (await runBinding(t, outsider.apiKey, bobProject.id, bobBinding.id)).job_id as string;
    const at = `/projects/${project.id}`;
    const checks: Array<[() => PromiseLike<Res>, string]> = [
      [() => t.http.get(`${at}/agent-bindings/${bobBinding.id}`), '404 binding_not_found'],
      [
        () => t.http.patch(`${at}/agent-bindings/${bobBinding.id}`).send({ metadata: {} }),
        '404 binding_not_found',
      ],
      [() => t.http.post(`${at}/agent-bindings/${bobBinding.id}/disable`), '404 binding_not_found'],
      [() => t.http.post(`${at}/agent-bindings/${bobBinding.id}/run`).send({}), '404 binding_not_found'],
      [
        () => t.http.post(`${at}/agent-bindings`).send({ agent_type_id: bobType.id }),
        '404 agent_type_not_found',
      ],
      [() => t.http.get(`${at}/agent-jobs/${bobJob}`), '404 project_agent_job_not_found'],
      [() => t.http.post(`${at}/agent-jobs/${bobJob}/cancel`), '404 project_agent_job_not_found'],
      [() => t.http.get(`/projects/${bobProject.id}/agent-bindings`), '404 project_not_found'],
      [() => t.http.get(`/projects/${bobProject.id}/agent-jobs/${bobJob}`), '404 project_not_found'],
      [() => t.http.post(`/projects/${bobProject.id}/agent-jobs/${bobJob}/cancel`), '404 project_not_found'],
    ];
    for (const [send, expected] of checks) {
      const before = await agentState(t);
      const res = await (send() as ReturnType<typeof t.http.get>).set('x-api-key', owner.apiKey);
      expect(outcome(res)).toBe(expected);
      expect(JSON.stringify(res.body)).not.toContain(bobBinding.id);
      expect(JSON.stringify(res.body)).not.toContain(bobType.key);
      expect(await agentState(t)).toEqual(before);
    }
    const list = await t.http.get(`${at}/agent-jobs`).set('x-api-key', owner.apiKey);
    expect(list.body.items.map((j: Json) => j.id)).not.toContain(bobJob);
  });

  it('an archived Project: 409 project_archived on binding writes and runs; reads and cancel still work', async () => {
    const p = await createProject(t, { accountId: owner.accountId });
    const b = await createBinding(t, owner.apiKey, p.id, { agent_type_id: type.id });
    const jobId = (await runBinding(t, owner.apiKey, p.id, b.id)).job_id as string;
    await archiveProject(t, p.id);
    expect(await row(owner.apiKey, p, b, jobId)).toEqual({
      ...table('200', '409 project_archived'),
      cancel: '200',
    });
    expect(
      (await t.http.get(`/projects/${p.id}/agent-jobs/${jobId}`).set('x-api-key', owner.apiKey)).body.status,
    ).toBe('cancelled');
    const hidden = await t.http.get(`/projects/${p.id}/agent-bindings`).set('x-api-key', outsider.apiKey);
    expect(outcome(hidden)).toBe('404 project_not_found');
  });
});
