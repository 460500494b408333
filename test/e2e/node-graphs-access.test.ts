import { nodeGraphsRepository, type ProjectRow } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: { error?: { code: string }; item?: { id: string; version: number } } };

const GRAPH = {
  nodes: [
    { id: 'a', type: 'step' },
    { id: 'b', type: 'step' },
  ],
  edges: [{ id: 'ab', source: 'a', target: 'b' }],
};

/**
 * Who may do what on node graphs, cell by cell: every member reads (`project.read`), only the owner
 * writes (`project.config.write`); non-members (accounts and Clients) and other accounts get 404.
 */
describe('Project node graphs: access by role', () => {
  let t: TestApp;
  let owner: Caller;
  let observer: Caller;
  let deriver: Caller;
  let outsider: Caller;
  let ownerClient: Caller;
  let deriverClient: Caller;
  let observerClient: Caller;
  let project: ProjectRow;
  let foreignProject: ProjectRow;

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
    foreignProject = await createProject(t, { accountId: outsider.accountId });
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
    await addMember(t, project, deriverClient, 'deriver', { as: 'client' });
    await addMember(t, project, observerClient, 'observer', { as: 'client' });
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (p: ProjectRow = project) => `/projects/${p.id}/node-graphs`;
  const newGraph = async (p: ProjectRow = project) => {
    const key = p === project ? owner.apiKey : outsider.apiKey;
    const res = await t.http.post(base(p)).set('x-api-key', key).send({ name: 'g', graph: GRAPH });
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    return res.body.item.id as string;
  };
  /** The routes for one caller; `graph` is a fresh graph (version 1) per route. */
  const routes = (
    key: string,
    p: ProjectRow = project,
  ): Record<string, (graph: string) => PromiseLike<Res>> => ({
    list: () => t.http.get(base(p)).set('x-api-key', key),
    create: () => t.http.post(base(p)).set('x-api-key', key).send({ name: 'by caller', graph: GRAPH }),
    get: (graph) => t.http.get(`${base(p)}/${graph}`).set('x-api-key', key),
    update: (graph) =>
      t.http
        .patch(`${base(p)}/${graph}`)
        .set('x-api-key', key)
        .send({ expected_version: 1, name: 'renamed' }),
    delete: (graph) => t.http.delete(`${base(p)}/${graph}`).set('x-api-key', key),
  });

  const journal = async (p: ProjectRow = project) => ({
    rows: await nodeGraphsRepository.listAllOfProject(t.resources.database.db, p.id),
    events: (await projectEventRows(t, p.id)).length,
    logs: (await projectLogRows(t, p)).length,
  });

  /** Every route for one caller; a refusal must leave rows, logs and events as they were. */
  async function row(key: string, p: ProjectRow = project) {
    const out: Record<string, string> = {};
    for (const [name, send] of Object.entries(routes(key, p))) {
      const graph = await newGraph(p);
      const before = await journal(p);
      const res = await send(graph);
      if (res.status >= 400) expect(await journal(p)).toEqual(before);
      out[name] = res.status >= 400 ? `${res.status} ${res.body.error?.code}` : String(res.status);
    }
    return out;
  }

  const DENIED = '403 project_access_denied';
  const HIDDEN = '404 project_not_found';
  const READS_ONLY = { list: '200', create: DENIED, get: '200', update: DENIED, delete: DENIED };
  const NOTHING = { list: HIDDEN, create: HIDDEN, get: HIDDEN, update: HIDDEN, delete: HIDDEN };

  it('owner: reads and writes', async () => {
    expect(await row(owner.apiKey)).toEqual({
      list: '200',
      create: '201',
      get: '200',
      update: '200',
      delete: '204',
    });
  });

  it('observer: reads; writes are 403', async () => {
    expect(await row(observer.apiKey)).toEqual(READS_ONLY);
  });

  it('deriver: reads; writes are 403', async () => {
    expect(await row(deriver.apiKey)).toEqual(READS_ONLY);
  });

  it('a Client made a deriver, and a Client of another account made an observer: reads only', async () => {
    expect(await row(deriverClient.apiKey)).toEqual(READS_ONLY);
    expect(await row(observerClient.apiKey)).toEqual(READS_ONLY);
  });

  it("non-member account, and a Client of the owner's account that is not a member: 404 on every route", async () => {
    expect(await row(outsider.apiKey)).toEqual(NOTHING);
    expect(await row(ownerClient.apiKey)).toEqual(NOTHING);
  });

  it("another account's Project: 404 project_not_found for every caller of this one; its graphs stay hidden", async () => {
    for (const caller of [owner, observer, deriver, ownerClient, deriverClient]) {
      for (const [name, send] of Object.entries(routes(caller.apiKey, foreignProject))) {
        const graph = await newGraph(foreignProject);
        const before = await journal(foreignProject);
        const res = await send(graph);
        expect([caller.clientId, name, res.status, res.body.error?.code]).toEqual([
          caller.clientId,
          name,
          404,
          'project_not_found',
        ]);
        expect(await journal(foreignProject)).toEqual(before);
      }
    }
    const theirs = await newGraph(foreignProject);
    for (const [name, send] of Object.entries(routes(owner.apiKey))) {
      if (name === 'list' || name === 'create') continue;
      const res = await send(theirs);
      expect([name, res.status, res.body.error?.code]).toEqual([name, 404, 'node_graph_not_found']);
    }
    const listed = await t.http.get(base()).set('x-api-key', owner.apiKey).expect(200);
    expect(listed.body.items.map((g: { id: string }) => g.id)).not.toContain(theirs);
    expect(
      await nodeGraphsRepository.findInProject(t.resources.database.db, foreignProject.id, theirs),
    ).toMatchObject({ name: 'g', version: 1 });
  });

  it('an unknown Project: 404 project_not_found', async () => {
    const res = await t.http.get('/projects/prj_missing/node-graphs').set('x-api-key', owner.apiKey);
    expect([res.status, res.body.error?.code]).toEqual([404, 'project_not_found']);
  });

  it('the event of a graph write is seen by every member (visibility project)', async () => {
    const graph = await newGraph();
    const after = (await projectEventRows(t, project.id)).at(-1)!.sequence;
    await t.http
      .patch(`${base()}/${graph}`)
      .set('x-api-key', owner.apiKey)
      .send({ expected_version: 1, name: 'seen' })
      .expect(200);
    for (const caller of [owner, observer, deriver, observerClient]) {
      const res = await t.http
        .get(`/projects/${project.id}/events?after=${after}&types=node_graph.updated`)
        .set('x-api-key', caller.apiKey)
        .expect(200);
      expect(JSON.stringify(res.body)).toContain(graph);
      expect(JSON.stringify(res.body)).not.toContain('seen');
    }
  });

  it('10 concurrent writers on one version: one succeeds, the others get 409 node_graph_conflict', async () => {
    const graph = await newGraph();
    const before = await journal();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.http
          .patch(`${base()}/${graph}`)
          .set('x-api-key', owner.apiKey)
          .send({ expected_version: 1, name: `writer ${i}` }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    const winner = results.find((r) => r.status === 200)!;
    const stored = await nodeGraphsRepository.findInProject(t.resources.database.db, project.id, graph);
    expect(stored).toMatchObject({ version: 2, name: winner.body.item.name });
    const after = await journal();
    expect(after.events - before.events).toBe(1);
    expect(after.logs - before.logs).toBe(1);
  });
});
