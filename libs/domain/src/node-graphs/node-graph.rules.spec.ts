import { DomainError } from '../errors';
import {
  assertNodeGraphVersion,
  changedNodeGraphFields,
  checkNodeGraph,
  NODE_GRAPH_MAX_BYTES,
  NODE_GRAPH_MAX_EDGES,
  NODE_GRAPH_MAX_NODES,
  NODE_GRAPH_MAX_PROBLEMS,
  nodeGraphDescription,
  requireNodeGraphName,
} from './node-graph.rules';

/** The error a call throws, as `{code, status, details}`. */
function thrown(fn: () => unknown): { code: string; status: number; details: unknown } {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError)
      return { code: error.code, status: error.status, details: error.details };
    throw error;
  }
  throw new Error('nothing was thrown');
}

const problemsOf = (graph: unknown) =>
  (thrown(() => checkNodeGraph(graph)).details as { problems: Array<{ path: string; problem: string }> })
    .problems;

const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `n${i}`, type: 't' }));

describe('node graph rules', () => {
  it('accepts an empty graph and a full one, counting and sizing it', () => {
    expect(checkNodeGraph({ nodes: [], edges: [] })).toEqual({
      graph: { nodes: [], edges: [] },
      json: '{"nodes":[],"edges":[]}',
      byteCount: 23,
      nodeCount: 0,
      edgeCount: 0,
    });
    const graph = {
      nodes: [
        { id: 'a', type: 'prompt', data: { text: 'é' }, position: { x: 1.5, y: -2 } },
        { id: 'b', type: 'llm', data: null },
      ],
      edges: [
        { id: 'e1', source: 'a', target: 'b', data: [1] },
        { id: 'e2', source: 'b', target: 'b' },
        { id: 'e3', source: 'a', target: 'b' },
      ],
    };
    const checked = checkNodeGraph(graph);
    expect(checked).toMatchObject({ nodeCount: 2, edgeCount: 3, json: JSON.stringify(graph) });
    expect(checked.byteCount).toBe(Buffer.byteLength(JSON.stringify(graph)));
  });

  it('refuses a document that is not {nodes, edges}', () => {
    for (const graph of [null, [], 'x', 1, { nodes: [] }, { edges: [] }, { nodes: {}, edges: [] }]) {
      expect(thrown(() => checkNodeGraph(graph))).toMatchObject({ code: 'node_graph_invalid', status: 400 });
    }
    expect(problemsOf({ nodes: [], edges: [], viewport: {} })).toEqual([
      { path: 'graph.viewport', problem: 'unknown field; allowed: nodes, edges' },
    ]);
  });

  it('names each problem by its path', () => {
    expect(
      problemsOf({
        nodes: [
          { id: 'a', type: 't' },
          { id: 'a', type: '' },
          { type: 't', width: 3 },
          { id: 'c', type: 't', position: { x: 1 } },
          'node',
        ],
        edges: [
          { id: 'e', source: 'a', target: 'zz' },
          { id: 'e', source: 'a', target: 'a', sourceHandle: 'h' },
          { id: 5, source: 'a', target: 'a' },
        ],
      }),
    ).toEqual([
      { path: 'nodes[1].type', problem: 'must be 1-200 characters' },
      { path: 'nodes[1].id', problem: 'duplicate node id "a"' },
      { path: 'nodes[2].width', problem: 'unknown field; allowed: id, type, data, position' },
      { path: 'nodes[2].id', problem: 'is required' },
      { path: 'nodes[3].position.y', problem: 'must be a finite number' },
      { path: 'nodes[4]', problem: 'must be an object {id, type, data?, position?}' },
      { path: 'edges[0].target', problem: 'no node has the id "zz"' },
      { path: 'edges[1].sourceHandle', problem: 'unknown field; allowed: id, source, target, data' },
      { path: 'edges[1].id', problem: 'duplicate edge id "e"' },
      { path: 'edges[2].id', problem: 'must be a string' },
    ]);
  });

  it('node and edge ids, types and edge ends: 1-200 characters, no NUL', () => {
    const long = 'x'.repeat(200);
    expect(
      checkNodeGraph({
        nodes: [{ id: long, type: '😀'.repeat(200) }],
        edges: [{ id: long, source: long, target: long }],
      }).nodeCount,
    ).toBe(1);
    expect(problemsOf({ nodes: [{ id: `${long}x`, type: 't' }], edges: [] })).toEqual([
      { path: 'nodes[0].id', problem: 'must be 1-200 characters' },
    ]);
    expect(problemsOf({ nodes: [{ id: 'a\u0000', type: 't' }], edges: [] })).toEqual([
      { path: 'nodes[0].id', problem: 'must not contain NUL characters' },
    ]);
  });

  it('reports at most 20 problems', () => {
    const problems = problemsOf({ nodes: Array.from({ length: 50 }, () => ({ id: 1 })), edges: [] });
    expect(problems).toHaveLength(NODE_GRAPH_MAX_PROBLEMS);
  });

  it('data must be plain JSON', () => {
    for (const data of [{ s: 'a\u0000' }, Number.NaN, new Date(0)]) {
      const error = thrown(() => checkNodeGraph({ nodes: [{ id: 'a', type: 't', data }], edges: [] }));
      expect(error.code).toBe('node_graph_invalid');
    }
  });

  it('no unpaired UTF-16 surrogate in any string or key (jsonb cannot store one); pairs are fine', () => {
    const lone = [
      [{ nodes: [{ id: 'a', type: 't', data: { s: 'x\ud800' } }], edges: [] }, 'nodes[0].data.s'],
      [{ nodes: [{ id: 'a', type: 't', data: ['ok', '\udc00y'] }], edges: [] }, 'nodes[0].data[1]'],
      [{ nodes: [{ id: 'a', type: 't', data: { ['k\udbff']: 1 } }], edges: [] }, 'nodes[0].data'],
      [{ nodes: [{ id: 'a\ud800', type: 't' }], edges: [] }, 'nodes[0].id'],
      [
        { nodes: [{ id: 'a', type: 't' }], edges: [{ id: 'e', source: 'a', target: 'a', data: '\udfff' }] },
        'edges[0].data',
      ],
    ] as const;
    for (const [graph, path] of lone) {
      expect(thrown(() => checkNodeGraph(graph))).toMatchObject({ code: 'node_graph_invalid', status: 400 });
      expect(problemsOf(graph)).toEqual([{ path, problem: 'contains an unpaired UTF-16 surrogate' }]);
    }
    const paired = { nodes: [{ id: '\ud83d\ude00', type: 't', data: { '\ud83d\udc4b': 'é😀' } }], edges: [] };
    expect(checkNodeGraph(paired).nodeCount).toBe(1);
  });

  it('at most 1,000 nodes and 5,000 edges (413 node_graph_too_large past either)', () => {
    const many = nodes(NODE_GRAPH_MAX_NODES);
    const edges = Array.from({ length: NODE_GRAPH_MAX_EDGES }, (_, i) => ({
      id: `e${i}`,
      source: `n${i % 1000}`,
      target: `n${(i * 7) % 1000}`,
    }));
    expect(checkNodeGraph({ nodes: many, edges })).toMatchObject({ nodeCount: 1000, edgeCount: 5000 });
    expect(thrown(() => checkNodeGraph({ nodes: nodes(1001), edges: [] }))).toEqual({
      code: 'node_graph_too_large',
      status: 413,
      details: { node_count: 1001, edge_count: 0, max_nodes: 1000, max_edges: 5000 },
    });
    expect(
      thrown(() =>
        checkNodeGraph({ nodes: many, edges: [...edges, { id: 'x', source: 'n0', target: 'n1' }] }),
      ),
    ).toMatchObject({ code: 'node_graph_too_large', details: { edge_count: 5001 } });
  });

  it('at most 1 MiB serialised', () => {
    const base = JSON.stringify({ nodes: [{ id: 'a', type: 't', data: '' }], edges: [] }).length;
    const fill = 'x'.repeat(NODE_GRAPH_MAX_BYTES - base);
    const at = checkNodeGraph({ nodes: [{ id: 'a', type: 't', data: fill }], edges: [] });
    expect(at.byteCount).toBe(NODE_GRAPH_MAX_BYTES);
    expect(
      thrown(() => checkNodeGraph({ nodes: [{ id: 'a', type: 't', data: `${fill}x` }], edges: [] })),
    ).toEqual({
      code: 'node_graph_too_large',
      status: 413,
      details: { graph_byte_count: NODE_GRAPH_MAX_BYTES + 1, max_bytes: NODE_GRAPH_MAX_BYTES },
    });
  });

  it('name 1-200 characters, description null or at most 2000', () => {
    expect(requireNodeGraphName('n'.repeat(200))).toHaveLength(200);
    for (const name of ['', 'n'.repeat(201), 5, null, 'a\u0000', 'a\ud800'])
      expect(thrown(() => requireNodeGraphName(name)).code).toBe('validation_error');
    expect(nodeGraphDescription(undefined)).toBeNull();
    expect(nodeGraphDescription(null)).toBeNull();
    expect(nodeGraphDescription('')).toBe('');
    expect(nodeGraphDescription('d'.repeat(2000))).toHaveLength(2000);
    for (const description of ['d'.repeat(2001), 3, 'a\u0000', '\udc00'])
      expect(thrown(() => nodeGraphDescription(description)).code).toBe('validation_error');
  });

  it('changed fields ignore equal values and key order', () => {
    const current = { name: 'n', description: null, graph: { nodes: [], edges: [] } };
    expect(
      changedNodeGraphFields(current, { name: 'n', description: null, graph: { edges: [], nodes: [] } }),
    ).toEqual([]);
    expect(changedNodeGraphFields(current, { name: 'm', description: '', graph: undefined })).toEqual([
      'name',
      'description',
    ]);
    expect(
      changedNodeGraphFields(current, { graph: { nodes: [{ id: 'a', type: 't' }], edges: [] } }),
    ).toEqual(['graph']);
  });

  it('versions: equal or absent passes, another is 409 node_graph_conflict', () => {
    expect(() => assertNodeGraphVersion(3, 3)).not.toThrow();
    expect(() => assertNodeGraphVersion(3, undefined)).not.toThrow();
    expect(thrown(() => assertNodeGraphVersion(3, 2))).toEqual({
      code: 'node_graph_conflict',
      status: 409,
      details: { expected_version: 2, current_version: 3 },
    });
  });
});
