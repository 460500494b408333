import { nodeGraphsRepository } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/** Node graphs on the embedded adapters (PGlite, in-process bus): the migration and every route. */
describe('Node graphs, embedded mode', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
    owner = await createAccountCaller(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates, lists, updates at a version and deletes, recording each write once', async () => {
    const project = await createProject(t, { accountId: owner.accountId });
    const base = `/projects/${project.id}/node-graphs`;
    const graph = { nodes: [{ id: 'a', type: 'step', data: { n: 1 } }], edges: [] };
    const created = (
      await t.http.post(base).set('x-api-key', owner.apiKey).send({ name: 'embedded', graph }).expect(201)
    ).body.item;
    expect(created).toMatchObject({ version: 1, node_count: 1, graph });
    const listed = (await t.http.get(base).set('x-api-key', owner.apiKey).expect(200)).body;
    expect(listed.items.map((g: { id: string }) => g.id)).toEqual([created.id]);
    const next = {
      nodes: [...graph.nodes, { id: 'b', type: 'step' }],
      edges: [{ id: 'e', source: 'a', target: 'b' }],
    };
    const updated = (
      await t.http
        .patch(`${base}/${created.id}`)
        .set('x-api-key', owner.apiKey)
        .send({ expected_version: 1, graph: next })
        .expect(200)
    ).body.item;
    expect(updated).toMatchObject({ version: 2, node_count: 2, edge_count: 1, graph: next });
    const stale = await t.http
      .patch(`${base}/${created.id}`)
      .set('x-api-key', owner.apiKey)
      .send({ expected_version: 1, name: 'late' })
      .expect(409);
    expect(stale.body.error.code).toBe('node_graph_conflict');
    await t.http
      .delete(`${base}/${created.id}?expected_version=2`)
      .set('x-api-key', owner.apiKey)
      .expect(204);

    expect(await nodeGraphsRepository.listAllOfProject(t.resources.database.db, project.id)).toEqual([]);
    expect((await projectEventRows(t, project.id)).map((e) => [e.sequence, e.type])).toEqual([
      [1, 'node_graph.created'],
      [2, 'node_graph.updated'],
      [3, 'node_graph.deleted'],
    ]);
    expect((await projectLogRows(t, project)).map((l) => l.action)).toEqual([
      'node_graph.create',
      'node_graph.update',
      'node_graph.delete',
    ]);
  });
});
