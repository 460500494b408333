import { nodeGraphsRepository, type ProjectRow } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

type Res = { status: number; body: { error?: { code: string; details?: any } } & Record<string, any> };

/** `n` nodes `n0..`, and `e` edges chaining them (`e` may exceed `n`: edges then repeat pairs). */
const graphOf = (n: number, e = 0) => ({
  nodes: Array.from({ length: n }, (_, i) => ({ id: `n${i}`, type: 'step' })),
  edges: Array.from({ length: e }, (_, i) => ({
    id: `e${i}`,
    source: `n${i % n}`,
    target: `n${(i + 1) % n}`,
  })),
});

const SAMPLE = {
  nodes: [
    { id: 'in', type: 'input', position: { x: 0, y: 0 } },
    {
      id: 'llm',
      type: 'llm',
      data: { prompt: 'the butler did it', temperature: 0.7 },
      position: { x: 200, y: 40 },
    },
    { id: 'out', type: 'derived_output', data: { domain: 'summary' } },
  ],
  edges: [
    { id: 'a', source: 'in', target: 'llm' },
    { id: 'b', source: 'llm', target: 'out', data: { label: 'text' } },
  ],
};

/** Project node graphs: create, read, list and paging, update with versions, delete, limits, journal. */
describe('Project node graphs', () => {
  let t: TestApp;
  let owner: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    project = await createProject(t, { accountId: owner.accountId });
  });
  afterAll(async () => {
    await t.close();
  });

  type P = Pick<ProjectRow, 'id'>;
  const base = (p: P = project) => `/projects/${p.id}/node-graphs`;
  const create = (body: Record<string, unknown>, p: P = project) =>
    t.http
      .post(base(p))
      .set('x-api-key', owner.apiKey)
      .send({ name: 'Pipeline', graph: graphOf(2, 1), ...body });
  const get = (id: string, p: P = project) => t.http.get(`${base(p)}/${id}`).set('x-api-key', owner.apiKey);
  const patch = (id: string, body: Record<string, unknown>, p: P = project) =>
    t.http
      .patch(`${base(p)}/${id}`)
      .set('x-api-key', owner.apiKey)
      .send(body);
  const del = (id: string, query = '', p: P = project) =>
    t.http.delete(`${base(p)}/${id}${query}`).set('x-api-key', owner.apiKey);
  const list = (query = '', p: P = project) =>
    t.http.get(`${base(p)}${query}`).set('x-api-key', owner.apiKey);
  const newGraph = async (body: Record<string, unknown> = {}, p: P = project) => {
    const res = await create(body, p);
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.item;
  };

  const journal = async (p: ProjectRow = project) => ({
    rows: await nodeGraphsRepository.listAllOfProject(t.resources.database.db, p.id),
    events: await projectEventRows(t, p.id),
    logs: await projectLogRows(t, p),
  });

  /** A request that must fail with this status and code, changing no row and writing no log or event. */
  async function refused(
    send: () => PromiseLike<Res>,
    status: number,
    code: string,
    p: ProjectRow = project,
  ) {
    const before = await journal(p);
    const res = await send();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    const after = await journal(p);
    expect(after.rows).toEqual(before.rows);
    expect(after.events.length).toBe(before.events.length);
    expect(after.logs.length).toBe(before.logs.length);
    return res;
  }

  describe('create and read', () => {
    it('creates version 1 with every field; one log and one event without the name or the graph', async () => {
      const before = await journal();
      const res = await create({
        name: 'Director pipeline',
        description: 'Summarise each scene',
        graph: SAMPLE,
      }).expect(201);
      expect(Object.keys(res.body)).toEqual(['item']);
      const item = res.body.item;
      expect(item).toEqual({
        id: expect.stringMatching(/^ngr_[0-9a-z]{26}$/),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: owner.accountId,
        name: 'Director pipeline',
        description: 'Summarise each scene',
        version: 1,
        node_count: 3,
        edge_count: 2,
        graph_byte_count: Buffer.byteLength(JSON.stringify(SAMPLE)),
        created_by_account_id: owner.accountId,
        created_by_client_id: owner.clientId,
        updated_by_account_id: owner.accountId,
        updated_by_client_id: owner.clientId,
        created_at: expect.any(Number),
        updated_at: item.created_at,
        graph: SAMPLE,
      });
      expect((await get(item.id).expect(200)).body).toEqual({ item });

      const after = await journal();
      expect(after.rows).toHaveLength(before.rows.length + 1);
      const events = after.events.slice(before.events.length);
      const logs = after.logs.slice(before.logs.length);
      expect(events).toHaveLength(1);
      expect(logs).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'node_graph.created',
        visibility: 'project',
        source: 'api',
        actor_account_id: owner.accountId,
        actor_client_id: owner.clientId,
        operation_log_id: logs[0].id,
        payload: { node_graph_id: item.id, version: 1, changed_fields: ['name', 'description', 'graph'] },
      });
      expect(logs[0]).toMatchObject({
        action: 'node_graph.create',
        status: 'succeeded',
        project_id: project.id,
        target_type: 'node_graph',
        target_id: item.id,
        before_ref: null,
        after_ref: { version: 1 },
        diff: { changed_fields: ['name', 'description', 'graph'] },
        metadata: { node_count: 3, edge_count: 2, graph_byte_count: item.graph_byte_count },
      });
      for (const text of [JSON.stringify(events[0]), JSON.stringify(logs[0])]) {
        expect(text).not.toMatch(/butler|Director|Summarise/);
      }
    });

    it('description defaults to null; an empty graph is a graph', async () => {
      const item = await newGraph({ graph: { nodes: [], edges: [] } });
      expect(item).toMatchObject({ description: null, node_count: 0, edge_count: 0, graph_byte_count: 23 });
      expect((await newGraph({ description: null })).description).toBeNull();
      expect((await newGraph({ description: '' })).description).toBe('');
    });

    it('an unknown graph id, or a graph id of another Project of the account: 404 node_graph_not_found', async () => {
      await refused(() => get('ngr_missing'), 404, 'node_graph_not_found');
      const other = await createProject(t, { accountId: owner.accountId });
      const theirs = await newGraph({}, other);
      await refused(() => get(theirs.id), 404, 'node_graph_not_found');
      await refused(() => patch(theirs.id, { expected_version: 1, name: 'x' }), 404, 'node_graph_not_found');
      await refused(() => del(theirs.id), 404, 'node_graph_not_found');
      expect((await get(theirs.id, other).expect(200)).body.item).toEqual(theirs);
    });
  });

  describe('fields and limits', () => {
    it('name: 1-200 characters; description: at most 2000', async () => {
      expect((await newGraph({ name: 'n'.repeat(200) })).name).toHaveLength(200);
      expect((await newGraph({ name: '😀'.repeat(200) })).name).toHaveLength(400);
      expect((await newGraph({ description: 'd'.repeat(2000) })).description).toHaveLength(2000);
      for (const body of [
        { name: '' },
        { name: 'n'.repeat(201) },
        { name: '😀'.repeat(201) },
        { name: 5 },
        { name: null },
        { name: 'a\u0000b' },
        { description: 'd'.repeat(2001) },
        { description: 7 },
      ]) {
        const res = await refused(() => create(body), 400, 'validation_error');
        expect(JSON.stringify(res.body.error?.details)).toMatch(/name|description/);
      }
    });

    it('missing or null name or graph, and unknown fields: 400 validation_error', async () => {
      const send = (body: Record<string, unknown>) => () =>
        t.http.post(base()).set('x-api-key', owner.apiKey).send(body);
      await refused(send({ graph: graphOf(1) }), 400, 'validation_error');
      await refused(send({ name: 'no graph' }), 400, 'validation_error');
      await refused(send({ name: 'null graph', graph: null }), 400, 'validation_error');
      await refused(() => create({ version: 3 }), 400, 'validation_error');
      await refused(() => create({ project_id: 'prj_x' }), 400, 'validation_error');
    });

    it('a graph that is not a valid document: 400 node_graph_invalid naming each problem', async () => {
      for (const graph of ['graph', [], 5, { nodes: [] }, { nodes: [], edges: {} }]) {
        await refused(() => create({ graph }), 400, 'node_graph_invalid');
      }
      const res = await refused(
        () =>
          create({
            graph: {
              nodes: [
                { id: 'a', type: 'step' },
                { id: 'a', type: 'step' },
                { id: 'b', type: 'step', position: { x: 'left', y: 0 }, selected: true },
              ],
              edges: [
                { id: 'e', source: 'a', target: 'b' },
                { id: 'e', source: 'a', target: 'ghost' },
              ],
              viewport: { zoom: 1 },
            },
          }),
        400,
        'node_graph_invalid',
      );
      expect(res.body.error?.details).toEqual({
        problems: [{ path: 'graph.viewport', problem: 'unknown field; allowed: nodes, edges' }],
      });
      const nodesAndEdges = await refused(
        () =>
          create({
            graph: {
              nodes: [
                { id: 'a', type: 'step' },
                { id: 'a', type: 'step' },
                { id: 'b', type: 'step', position: { x: 'left', y: 0 }, selected: true },
                { id: 'c' },
              ],
              edges: [
                { id: 'e', source: 'a', target: 'b' },
                { id: 'e', source: 'a', target: 'ghost' },
              ],
            },
          }),
        400,
        'node_graph_invalid',
      );
      expect(nodesAndEdges.body.error?.details.problems).toEqual([
        { path: 'nodes[1].id', problem: 'duplicate node id "a"' },
        { path: 'nodes[2].selected', problem: 'unknown field; allowed: id, type, data, position' },
        { path: 'nodes[2].position.x', problem: 'must be a finite number' },
        { path: 'nodes[3].type', problem: 'is required' },
        { path: 'edges[1].target', problem: 'no node has the id "ghost"' },
        { path: 'edges[1].id', problem: 'duplicate edge id "e"' },
      ]);
      await refused(
        () => create({ graph: { nodes: [{ id: 'a', type: 't', data: { s: 'x\u0000' } }], edges: [] } }),
        400,
        'node_graph_invalid',
      );
    });

    it('an unpaired UTF-16 surrogate (jsonb cannot store one): 400, never 500, on create and PATCH', async () => {
      const lone = { nodes: [{ id: 'a', type: 't', data: { label: 'x\ud800' } }], edges: [] };
      const res = await refused(() => create({ graph: lone }), 400, 'node_graph_invalid');
      expect(res.body.error?.details.problems).toEqual([
        { path: 'nodes[0].data.label', problem: 'contains an unpaired UTF-16 surrogate' },
      ]);
      await refused(
        () => create({ graph: { nodes: [{ id: '\udc00', type: 't' }], edges: [] } }),
        400,
        'node_graph_invalid',
      );
      await refused(() => create({ name: 'n\ud800' }), 400, 'validation_error');
      const graph = await newGraph();
      await refused(() => patch(graph.id, { expected_version: 1, graph: lone }), 400, 'node_graph_invalid');
      await refused(
        () => patch(graph.id, { expected_version: 1, description: '\udfff' }),
        400,
        'validation_error',
      );
      // A surrogate pair is an ordinary character.
      const ok = await create({ name: 'emoji 😀', graph: { nodes: [{ id: '😀', type: 't' }], edges: [] } });
      expect(ok.status).toBe(201);
      expect(ok.body.item).toMatchObject({ name: 'emoji 😀', graph: { nodes: [{ id: '😀' }] } });
    });

    it('self-loops, cycles and parallel edges are allowed', async () => {
      const graph = {
        nodes: [
          { id: 'a', type: 'step' },
          { id: 'b', type: 'step' },
        ],
        edges: [
          { id: '1', source: 'a', target: 'a' },
          { id: '2', source: 'a', target: 'b' },
          { id: '3', source: 'b', target: 'a' },
          { id: '4', source: 'a', target: 'b' },
        ],
      };
      expect((await newGraph({ graph })).edge_count).toBe(4);
    });

    it('at most 1,000 nodes and 5,000 edges: 413 node_graph_too_large one past either', async () => {
      const full = await newGraph({ graph: graphOf(1000, 5000) });
      expect(full).toMatchObject({ node_count: 1000, edge_count: 5000 });
      expect((await get(full.id).expect(200)).body.item.graph).toEqual(graphOf(1000, 5000));
      const nodes = await refused(() => create({ graph: graphOf(1001) }), 413, 'node_graph_too_large');
      expect(nodes.body.error?.details).toEqual({
        node_count: 1001,
        edge_count: 0,
        max_nodes: 1000,
        max_edges: 5000,
      });
      const edges = await refused(() => create({ graph: graphOf(1000, 5001) }), 413, 'node_graph_too_large');
      expect(edges.body.error?.details).toMatchObject({ node_count: 1000, edge_count: 5001 });
    });

    it('at most 1 MiB serialised: 413 node_graph_too_large one byte past', async () => {
      const shell = JSON.stringify({ nodes: [{ id: 'a', type: 't', data: '' }], edges: [] }).length;
      const fill = 'x'.repeat(1024 * 1024 - shell);
      const at = await newGraph({ graph: { nodes: [{ id: 'a', type: 't', data: fill }], edges: [] } });
      expect(at.graph_byte_count).toBe(1024 * 1024);
      const res = await refused(
        () => create({ graph: { nodes: [{ id: 'a', type: 't', data: `${fill}x` }], edges: [] } }),
        413,
        'node_graph_too_large',
      );
      expect(res.body.error?.details).toEqual({ graph_byte_count: 1024 * 1024 + 1, max_bytes: 1024 * 1024 });
    });
  });

  describe('list', () => {
    let listed: ProjectRow;
    let graphs: Array<{ id: string }>;
    const ids = (res: Res) => (res.body.items as Array<{ id: string }>).map((i) => i.id);

    beforeAll(async () => {
      listed = await createProject(t, { accountId: owner.accountId });
      graphs = [];
      for (let i = 0; i < 7; i++)
        graphs.push(await newGraph({ name: `g${i}`, graph: graphOf(i + 1, i) }, listed));
    });

    it('lists summaries without the documents, newest first, as {items, next_cursor}', async () => {
      const res = await list('', listed).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
      expect(ids(res)).toEqual(graphs.map((g) => g.id).reverse());
      expect(res.body.next_cursor).toBeNull();
      const { graph: _graph, ...summary } = (await get(graphs[6].id, listed).expect(200)).body.item;
      expect(res.body.items[0]).toEqual(summary);
      expect(res.body.items[0]).not.toHaveProperty('graph');
    });

    it('pages with a cursor bound to the Project; limit 1-200', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Res = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`, listed).expect(200);
        expect(res.body.items.length).toBeLessThanOrEqual(3);
        seen.push(...ids(res));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(graphs.map((g) => g.id).reverse());
      const first = await list('?limit=2', listed).expect(200);
      await refused(() => list(`?limit=2&cursor=${first.body.next_cursor}`), 400, 'invalid_cursor');
      const inboxCursor = Buffer.from(JSON.stringify({ v: 1, s: 'x', k: ['ngr_1'] })).toString('base64url');
      await refused(() => list(`?cursor=${inboxCursor}`, listed), 400, 'invalid_cursor', listed);
      await refused(() => list('?cursor=garbage!', listed), 400, 'invalid_cursor', listed);
      expect(ids(await list('?limit=200', listed).expect(200))).toHaveLength(7);
      expect(ids(await list('?limit=1', listed).expect(200))).toHaveLength(1);
      await refused(() => list('?limit=201', listed), 400, 'validation_error', listed);
      await refused(() => list('?limit=0', listed), 400, 'validation_error', listed);
      await refused(() => list('?limit=x', listed), 400, 'validation_error', listed);
      await refused(() => list('?name=g1', listed), 400, 'validation_error', listed);
    });

    it('defaults to 50 graphs a page', async () => {
      const big = await createProject(t, { accountId: owner.accountId });
      for (let i = 0; i < 51; i++) await newGraph({ name: `k${i}` }, big);
      const page = await list('', big).expect(200);
      expect(page.body.items).toHaveLength(50);
      const rest = await list(`?cursor=${page.body.next_cursor}`, big).expect(200);
      expect(rest.body.items.map((i: { name: string }) => i.name)).toEqual(['k0']);
      expect(rest.body.next_cursor).toBeNull();
    });
  });

  describe('update', () => {
    it('changes the given fields at the expected version; one log and one event naming them', async () => {
      const graph = await newGraph({ name: 'Before', description: 'old', graph: SAMPLE });
      const before = await journal();
      const renamed = (await patch(graph.id, { expected_version: 1, name: 'After' }).expect(200)).body.item;
      expect(renamed).toEqual({
        ...graph,
        name: 'After',
        version: 2,
        updated_at: expect.any(Number),
      });
      expect(renamed.updated_at).toBeGreaterThanOrEqual(graph.updated_at);
      const next = { nodes: [...SAMPLE.nodes, { id: 'extra', type: 'note' }], edges: SAMPLE.edges };
      const replaced = (
        await patch(graph.id, { expected_version: 2, description: null, graph: next }).expect(200)
      ).body.item;
      expect(replaced).toMatchObject({
        name: 'After',
        description: null,
        version: 3,
        node_count: 4,
        edge_count: 2,
        graph_byte_count: Buffer.byteLength(JSON.stringify(next)),
        graph: next,
      });
      expect((await get(graph.id).expect(200)).body.item).toEqual(replaced);

      const after = await journal();
      expect(after.events.slice(before.events.length).map((e) => [e.type, e.payload])).toEqual([
        ['node_graph.updated', { node_graph_id: graph.id, version: 2, changed_fields: ['name'] }],
        [
          'node_graph.updated',
          { node_graph_id: graph.id, version: 3, changed_fields: ['description', 'graph'] },
        ],
      ]);
      const logs = after.logs.slice(before.logs.length);
      expect(logs.map((l) => [l.action, l.before_ref, l.after_ref, l.diff])).toEqual([
        ['node_graph.update', { version: 1 }, { version: 2 }, { changed_fields: ['name'] }],
        ['node_graph.update', { version: 2 }, { version: 3 }, { changed_fields: ['description', 'graph'] }],
      ]);
      expect(logs[1].metadata).toEqual({
        node_count: 4,
        edge_count: 2,
        graph_byte_count: replaced.graph_byte_count,
      });
      expect(JSON.stringify(after.events.slice(before.events.length))).not.toMatch(/butler|After/);
    });

    it('another version than the current one: 409 node_graph_conflict, nothing written', async () => {
      const graph = await newGraph();
      await patch(graph.id, { expected_version: 1, name: 'first writer' }).expect(200);
      const res = await refused(
        () => patch(graph.id, { expected_version: 1, name: 'second writer' }),
        409,
        'node_graph_conflict',
      );
      expect(res.body.error?.details).toEqual({ expected_version: 1, current_version: 2 });
      await refused(
        () => patch(graph.id, { expected_version: 3, name: 'ahead' }),
        409,
        'node_graph_conflict',
      );
      // Even a PATCH that would change nothing is checked against the version.
      await refused(
        () => patch(graph.id, { expected_version: 1, name: 'first writer' }),
        409,
        'node_graph_conflict',
      );
      expect((await get(graph.id).expect(200)).body.item).toMatchObject({ name: 'first writer', version: 2 });
    });

    it('a PATCH that changes nothing writes nothing and keeps the version', async () => {
      const graph = await newGraph({ name: 'Same', description: 'd', graph: SAMPLE });
      const reordered = {
        edges: SAMPLE.edges.map((e) => Object.fromEntries(Object.entries(e).reverse())),
        nodes: SAMPLE.nodes.map((n) => Object.fromEntries(Object.entries(n).reverse())),
      };
      const before = await journal();
      const res = await patch(graph.id, {
        expected_version: 1,
        name: 'Same',
        description: 'd',
        graph: reordered,
      });
      expect(res.status).toBe(200);
      expect(res.body.item).toEqual(graph);
      const after = await journal();
      expect(after.rows).toEqual(before.rows);
      expect(after.events).toHaveLength(before.events.length);
      expect(after.logs).toHaveLength(before.logs.length);
    });

    it('expected_version is required and a positive integer; at least one field; unknown fields refused', async () => {
      const graph = await newGraph();
      for (const body of [
        { name: 'x' },
        { expected_version: 0, name: 'x' },
        { expected_version: '1', name: 'x' },
        { expected_version: 1.5, name: 'x' },
        { expected_version: null, name: 'x' },
        { expected_version: 1 },
        { expected_version: 1, name: '' },
        { expected_version: 1, name: null },
        { expected_version: 1, name: 'n'.repeat(201) },
        { expected_version: 1, description: 'd'.repeat(2001) },
        { expected_version: 1, version: 2 },
      ]) {
        await refused(() => patch(graph.id, body), 400, 'validation_error');
      }
      expect(
        (await patch(graph.id, { expected_version: 1, name: 'n'.repeat(200) }).expect(200)).body.item.version,
      ).toBe(2);
    });

    it('the graph is checked like on create (400 node_graph_invalid, 413 node_graph_too_large)', async () => {
      const graph = await newGraph();
      await refused(
        () =>
          patch(graph.id, {
            expected_version: 1,
            graph: { nodes: [], edges: [{ id: 'e', source: 'a', target: 'b' }] },
          }),
        400,
        'node_graph_invalid',
      );
      await refused(() => patch(graph.id, { expected_version: 1, graph: null }), 400, 'node_graph_invalid');
      await refused(
        () => patch(graph.id, { expected_version: 1, graph: graphOf(1001) }),
        413,
        'node_graph_too_large',
      );
      await refused(
        () => patch(graph.id, { expected_version: 1, graph: graphOf(2, 5001) }),
        413,
        'node_graph_too_large',
      );
      expect(
        (await patch(graph.id, { expected_version: 1, graph: graphOf(1000, 5000) }).expect(200)).body.item,
      ).toMatchObject({ version: 2, node_count: 1000, edge_count: 5000 });
    });

    it('an unknown graph: 404 node_graph_not_found', async () => {
      await refused(
        () => patch('ngr_missing', { expected_version: 1, name: 'x' }),
        404,
        'node_graph_not_found',
      );
    });
  });

  describe('delete', () => {
    it('deletes the row (204); the log and the event keep its id and last version', async () => {
      const graph = await newGraph({ graph: SAMPLE });
      await patch(graph.id, { expected_version: 1, name: 'v2' }).expect(200);
      const before = await journal();
      const res = await del(graph.id, '?expected_version=2').expect(204);
      expect(res.body).toEqual({});
      expect(res.text).toBe('');
      await refused(() => get(graph.id), 404, 'node_graph_not_found');
      const after = await journal();
      expect(after.rows.map((r) => r.id)).not.toContain(graph.id);
      expect(after.rows).toHaveLength(before.rows.length - 1);
      const events = after.events.slice(before.events.length);
      const logs = after.logs.slice(before.logs.length);
      expect(events.map((e) => [e.type, e.visibility, e.payload])).toEqual([
        ['node_graph.deleted', 'project', { node_graph_id: graph.id, version: 2, changed_fields: [] }],
      ]);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({
        action: 'node_graph.delete',
        target_type: 'node_graph',
        target_id: graph.id,
        before_ref: { version: 2 },
        after_ref: null,
        metadata: { node_count: 3, edge_count: 2, graph_byte_count: graph.graph_byte_count },
      });
      expect(events[0].operation_log_id).toBe(logs[0].id);
      await refused(() => del(graph.id), 404, 'node_graph_not_found');
    });

    it('without expected_version deletes whatever the version', async () => {
      const graph = await newGraph();
      await patch(graph.id, { expected_version: 1, name: 'v2' }).expect(200);
      await del(graph.id).expect(204);
      await refused(() => get(graph.id), 404, 'node_graph_not_found');
    });

    it('another expected_version: 409 node_graph_conflict; a bad one: 400 validation_error; nothing deleted', async () => {
      const graph = await newGraph();
      const res = await refused(() => del(graph.id, '?expected_version=2'), 409, 'node_graph_conflict');
      expect(res.body.error?.details).toEqual({ expected_version: 2, current_version: 1 });
      for (const query of [
        '?expected_version=0',
        '?expected_version=x',
        '?expected_version=1.5',
        '?force=1',
      ]) {
        await refused(() => del(graph.id, query), 400, 'validation_error');
      }
      expect((await get(graph.id).expect(200)).body.item).toEqual(graph);
    });
  });

  describe('archived Project', () => {
    it('answers every route with 409 project_archived and writes nothing, until restored', async () => {
      const frozen = await createProject(t, { accountId: owner.accountId });
      const graph = await newGraph({}, frozen);
      await t.http.post(`/projects/${frozen.id}/archive`).set('x-api-key', owner.apiKey).expect(200);
      const routes: Array<() => PromiseLike<Res>> = [
        () => list('', frozen),
        () => create({}, frozen),
        () => get(graph.id, frozen),
        () => patch(graph.id, { expected_version: 1, name: 'x' }, frozen),
        () => del(graph.id, '', frozen),
        // The archive is checked before the graph and the body.
        () => get('ngr_missing', frozen),
        () => create({ graph: graphOf(1001) }, frozen),
      ];
      for (const send of routes) await refused(send, 409, 'project_archived', frozen);
      await t.http.post(`/projects/${frozen.id}/restore`).set('x-api-key', owner.apiKey).expect(200);
      expect(
        (await patch(graph.id, { expected_version: 1, name: 'x' }, frozen).expect(200)).body.item.version,
      ).toBe(2);
    });
  });
});
