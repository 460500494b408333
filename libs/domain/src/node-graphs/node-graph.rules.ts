import { DomainError, validationError } from '../errors';
import { canonicalJson, serialiseValue } from '../derived-outputs/derived-output.rules';
import { firstBadStringPath, hasUnpairedSurrogate } from '../text/storable-text';

/**
 * Project node graphs (spec 1 names `/projects/:id/node-graphs`; the design is the lead's decisions
 * doc, "Node graphs"): a versioned JSON document of nodes and edges that a front end edits (an agent or
 * prompt pipeline). The field limits, the graph checks and the names of each write. Pure: no I/O.
 */
export const NODE_GRAPH_NAME_MAX_CHARS = 200;
export const NODE_GRAPH_DESCRIPTION_MAX_CHARS = 2000;
export const NODE_GRAPH_MAX_NODES = 1000;
export const NODE_GRAPH_MAX_EDGES = 5000;
/** Serialised UTF-8 size limit of `graph`: 1 MiB. */
export const NODE_GRAPH_MAX_BYTES = 1024 * 1024;
/** Node and edge ids, node types, edge ends: 1-200 characters. */
export const NODE_GRAPH_TOKEN_MAX_CHARS = 200;
/** At most this many problems are reported for one refused graph. */
export const NODE_GRAPH_MAX_PROBLEMS = 20;
export const NODE_GRAPH_LIST_DEFAULT_LIMIT = 50;
export const NODE_GRAPH_LIST_MAX_LIMIT = 200;

export interface NodeGraphNode {
  id: string;
  type: string;
  data?: unknown;
  position?: { x: number; y: number };
}

export interface NodeGraphEdge {
  id: string;
  source: string;
  target: string;
  data?: unknown;
}

export interface NodeGraph {
  nodes: NodeGraphNode[];
  edges: NodeGraphEdge[];
}

/** A graph that passed every check, with what is stored beside it. */
export interface CheckedNodeGraph {
  graph: NodeGraph;
  json: string;
  byteCount: number;
  nodeCount: number;
  edgeCount: number;
}

export interface NodeGraphProblem {
  /** Where in `graph`, e.g. `nodes[3].id`; `graph` for the document itself. */
  path: string;
  problem: string;
}

const fieldError = (field: string, problem: string) =>
  validationError(problem, { fields: [{ field, problems: [problem] }] });

/** `name`: 1-200 characters (Unicode code points), no NUL. */
export function requireNodeGraphName(name: unknown): string {
  if (typeof name !== 'string') throw fieldError('name', 'name must be a string');
  const length = [...name].length;
  if (length < 1 || length > NODE_GRAPH_NAME_MAX_CHARS)
    throw fieldError('name', `name must be 1-${NODE_GRAPH_NAME_MAX_CHARS} characters`);
  if (name.includes('\u0000')) throw fieldError('name', 'name must not contain NUL characters');
  if (hasUnpairedSurrogate(name)) throw fieldError('name', 'name must not contain unpaired surrogates');
  return name;
}

/** `description`: null (none) or 0-2000 characters, no NUL. */
export function nodeGraphDescription(description: unknown): string | null {
  if (description === null || description === undefined) return null;
  if (typeof description !== 'string')
    throw fieldError('description', 'description must be a string or null');
  if ([...description].length > NODE_GRAPH_DESCRIPTION_MAX_CHARS)
    throw fieldError(
      'description',
      `description must be at most ${NODE_GRAPH_DESCRIPTION_MAX_CHARS} characters`,
    );
  if (description.includes('\u0000'))
    throw fieldError('description', 'description must not contain NUL characters');
  if (hasUnpairedSurrogate(description))
    throw fieldError('description', 'description must not contain unpaired surrogates');
  return description;
}

const invalidGraph = (problems: NodeGraphProblem[]) =>
  new DomainError(
    'node_graph_invalid',
    400,
    `graph is invalid: ${problems[0].path}: ${problems[0].problem}`,
    { problems },
  );

const tooLarge = (message: string, details: Record<string, number>) =>
  new DomainError('node_graph_too_large', 413, message, details);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(value));

const GRAPH_KEYS = ['nodes', 'edges'];
const NODE_KEYS = ['id', 'type', 'data', 'position'];
const EDGE_KEYS = ['id', 'source', 'target', 'data'];
const POSITION_KEYS = ['x', 'y'];

/** Collects problems up to the report limit; `full` tells the caller to stop looking. */
class Problems {
  readonly list: NodeGraphProblem[] = [];
  add(path: string, problem: string): void {
    if (this.list.length < NODE_GRAPH_MAX_PROBLEMS) this.list.push({ path, problem });
  }
  get full(): boolean {
    return this.list.length >= NODE_GRAPH_MAX_PROBLEMS;
  }
}

function checkKeys(problems: Problems, path: string, value: Record<string, unknown>, allowed: string[]) {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      problems.add(`${path}.${key}`, `unknown field; allowed: ${allowed.join(', ')}`);
  }
}

/** A required string of 1-200 characters without NUL; the string when it is one. */
function checkToken(problems: Problems, path: string, value: unknown): string | null {
  if (value === undefined) {
    problems.add(path, 'is required');
    return null;
  }
  if (typeof value !== 'string') {
    problems.add(path, 'must be a string');
    return null;
  }
  const length = [...value].length;
  if (length < 1 || length > NODE_GRAPH_TOKEN_MAX_CHARS) {
    problems.add(path, `must be 1-${NODE_GRAPH_TOKEN_MAX_CHARS} characters`);
    return null;
  }
  if (value.includes('\u0000')) {
    problems.add(path, 'must not contain NUL characters');
    return null;
  }
  return value;
}

function checkPosition(problems: Problems, path: string, position: unknown): void {
  if (!isPlainObject(position)) {
    problems.add(path, 'must be an object {x, y}');
    return;
  }
  checkKeys(problems, path, position, POSITION_KEYS);
  for (const axis of POSITION_KEYS) {
    const value = position[axis];
    if (typeof value !== 'number' || !Number.isFinite(value))
      problems.add(`${path}.${axis}`, 'must be a finite number');
  }
}

function checkNodes(problems: Problems, nodes: unknown[]): Set<string> {
  const ids = new Set<string>();
  for (let i = 0; i < nodes.length && !problems.full; i++) {
    const path = `nodes[${i}]`;
    const node = nodes[i];
    if (!isPlainObject(node)) {
      problems.add(path, 'must be an object {id, type, data?, position?}');
      continue;
    }
    checkKeys(problems, path, node, NODE_KEYS);
    const id = checkToken(problems, `${path}.id`, node.id);
    checkToken(problems, `${path}.type`, node.type);
    if (node.position !== undefined) checkPosition(problems, `${path}.position`, node.position);
    if (id === null) continue;
    if (ids.has(id)) problems.add(`${path}.id`, `duplicate node id "${id}"`);
    ids.add(id);
  }
  return ids;
}

function checkEdges(problems: Problems, edges: unknown[], nodeIds: Set<string>): void {
  const ids = new Set<string>();
  for (let i = 0; i < edges.length && !problems.full; i++) {
    const path = `edges[${i}]`;
    const edge = edges[i];
    if (!isPlainObject(edge)) {
      problems.add(path, 'must be an object {id, source, target, data?}');
      continue;
    }
    checkKeys(problems, path, edge, EDGE_KEYS);
    const id = checkToken(problems, `${path}.id`, edge.id);
    for (const end of ['source', 'target'] as const) {
      const nodeId = checkToken(problems, `${path}.${end}`, edge[end]);
      if (nodeId !== null && !nodeIds.has(nodeId))
        problems.add(`${path}.${end}`, `no node has the id "${nodeId}"`);
    }
    if (id === null) continue;
    if (ids.has(id)) problems.add(`${path}.id`, `duplicate edge id "${id}"`);
    ids.add(id);
  }
}

/**
 * Checks a graph document and serialises it. In order:
 * - `graph` is an object holding exactly `nodes` and `edges`, both arrays; else 400 `node_graph_invalid`;
 * - at most 1,000 nodes and 5,000 edges; else 413 `node_graph_too_large`;
 * - each node is `{id, type, data?, position?}` and each edge `{id, source, target, data?}` (no other
 *   fields), ids, types and edge ends are 1-200 characters without NUL, `position` is `{x, y}` of finite
 *   numbers, node ids are unique among nodes and edge ids among edges, and every edge's `source` and
 *   `target` name a node of the graph (self-loops, cycles and parallel edges are allowed); else 400
 *   `node_graph_invalid` with `details.problems` (`{path, problem}`, at most 20);
 * - no string or key holds an unpaired UTF-16 surrogate (jsonb cannot store one); else 400
 *   `node_graph_invalid`;
 * - `data` is any plain JSON (finite numbers, strings without NUL, at most 128 levels in the whole
 *   document); else 400 `node_graph_invalid`;
 * - at most 1 MiB serialised (UTF-8 bytes); else 413 `node_graph_too_large`.
 */
export function checkNodeGraph(graph: unknown): CheckedNodeGraph {
  const problems = new Problems();
  if (!isPlainObject(graph))
    throw invalidGraph([{ path: 'graph', problem: 'must be an object {nodes, edges}' }]);
  checkKeys(problems, 'graph', graph, GRAPH_KEYS);
  for (const key of GRAPH_KEYS) {
    if (!Array.isArray(graph[key])) problems.add(`graph.${key}`, 'must be an array');
  }
  if (problems.list.length > 0) throw invalidGraph(problems.list);
  const nodes = graph.nodes as unknown[];
  const edges = graph.edges as unknown[];
  if (nodes.length > NODE_GRAPH_MAX_NODES || edges.length > NODE_GRAPH_MAX_EDGES) {
    throw tooLarge(
      `graph has ${nodes.length} nodes and ${edges.length} edges; the limits are ${NODE_GRAPH_MAX_NODES} and ${NODE_GRAPH_MAX_EDGES}`,
      {
        node_count: nodes.length,
        edge_count: edges.length,
        max_nodes: NODE_GRAPH_MAX_NODES,
        max_edges: NODE_GRAPH_MAX_EDGES,
      },
    );
  }
  const nodeIds = checkNodes(problems, nodes);
  if (!problems.full) checkEdges(problems, edges, nodeIds);
  if (problems.list.length > 0) throw invalidGraph(problems.list);
  // jsonb refuses a lone surrogate's escape: a 400 here rather than a database error.
  const surrogate = firstBadStringPath(graph, 'graph', hasUnpairedSurrogate);
  if (surrogate !== null) {
    const path = surrogate.replace(/^graph\./, ''); // `nodes[3].data.label`, as the other problems
    throw invalidGraph([{ path, problem: 'contains an unpaired UTF-16 surrogate' }]);
  }

  let serialised: { json: string; byteCount: number };
  try {
    serialised = serialiseValue(graph, NODE_GRAPH_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (error.code === 'derived_output_payload_too_large') {
      const details = error.details as { value_byte_count: number; max_bytes: number };
      throw tooLarge(
        `graph is ${details.value_byte_count} bytes serialised; the limit is ${details.max_bytes}`,
        { graph_byte_count: details.value_byte_count, max_bytes: details.max_bytes },
      );
    }
    if (error.code === 'derived_output_payload_invalid') {
      throw invalidGraph([{ path: 'graph', problem: error.message.replace(/^value /, '') }]);
    }
    throw error;
  }
  return {
    graph: graph as unknown as NodeGraph,
    json: serialised.json,
    byteCount: serialised.byteCount,
    nodeCount: nodes.length,
    edgeCount: edges.length,
  };
}

/** The stored fields a write may change, and what decides that each changed. */
export interface NodeGraphFields {
  name: string;
  description: string | null;
  graph: unknown;
}

/**
 * The fields a PATCH changes, in a fixed order (`name`, `description`, `graph`): a given field that
 * equals the stored one (graphs compared whatever their key order, as jsonb reorders keys) is not a change.
 */
export function changedNodeGraphFields(current: NodeGraphFields, next: Partial<NodeGraphFields>): string[] {
  const changed: string[] = [];
  if (next.name !== undefined && next.name !== current.name) changed.push('name');
  if (next.description !== undefined && next.description !== current.description) changed.push('description');
  if (next.graph !== undefined && canonicalJson(next.graph) !== canonicalJson(current.graph))
    changed.push('graph');
  return changed;
}

/**
 * Optimistic concurrency: a write that names the version it read is refused with 409
 * `node_graph_conflict` when the graph has moved on since (`details {expected_version, current_version}`).
 */
export function assertNodeGraphVersion(current: number, expected: number | undefined): void {
  if (expected === undefined || expected === current) return;
  throw new DomainError(
    'node_graph_conflict',
    409,
    `The node graph is at version ${current}, not ${expected}; read it again and reapply the change`,
    { expected_version: expected, current_version: current },
  );
}

export type NodeGraphWriteAction = 'create' | 'update' | 'delete';

/** Operation log action and Project event type of each node graph write. */
export const NODE_GRAPH_WRITE_NAMES: Record<NodeGraphWriteAction, { log: string; event: string }> = {
  create: { log: 'node_graph.create', event: 'node_graph.created' },
  update: { log: 'node_graph.update', event: 'node_graph.updated' },
  delete: { log: 'node_graph.delete', event: 'node_graph.deleted' },
};
