import { DomainError } from '../errors';
import { jsonNestedDeeperThan } from '../text/json-depth';
import { firstBadStringPath, isUnstorableText } from '../text/storable-text';
import { cloneJson, importJsonTooDeep, importParseError, isPlainObject, JsonObject } from './format.rules';
import {
  NCHAT_SPEC,
  NCHAT_SPEC_VERSION,
  NCHAT_SUPPORTED_MAJOR,
  NchatBranch,
  NchatCounts,
  NchatData,
  NchatFile,
  NchatFloor,
  NchatFloorState,
  NchatLine,
  NchatMemoryEdge,
  NchatMemoryItem,
  NchatMessage,
  NchatMessageRole,
  NchatPage,
  NchatPageKind,
  NchatVariable,
  NchatVariableScope,
  pageChecksum,
  ParsedNchat,
} from './nchat';

/** Reading an `nchat` file (types and writing in nchat.ts): version check, shape and reference checks. */

const FLOOR_STATES: readonly NchatFloorState[] = ['generating', 'committed', 'failed', 'cancelled'];
const PAGE_KINDS: readonly NchatPageKind[] = ['input', 'output', 'greeting'];
const MESSAGE_ROLES: readonly NchatMessageRole[] = ['system', 'user', 'assistant', 'narrator', 'tool'];
const VARIABLE_SCOPES: readonly NchatVariableScope[] = ['chat', 'branch', 'floor', 'page'];
const SESSION_STATUSES = ['active', 'archived'] as const;
/** The largest value of the `integer` columns an import writes (floor_no, page_no, version, seq, tokens). */
const INT4_MAX = 2_147_483_647;

/**
 * Parses and checks an `nchat` file: 400 `import_unsupported_version` for another `spec_version` major,
 * 400 `import_parse_error` naming the path of any shape or reference error, 400 `import_empty` when the
 * file has no message. Returns a typed copy; warnings name checksum mismatches and newer minor versions.
 */
export function parseNchat(text: string): ParsedNchat {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw importParseError(`nchat file is not valid JSON: ${(error as Error).message}`);
  }
  if (jsonNestedDeeperThan(value)) throw importJsonTooDeep('nchat file');
  // Text Postgres cannot store is refused here, like a backup's (the async import's worker failed at
  // its INSERT and retried, then dead-lettered as job_failed).
  const unstorable = firstBadStringPath(value, '$', isUnstorableText);
  if (unstorable !== null) {
    fail(unstorable, 'contains a NUL character (U+0000) or an unpaired surrogate, which cannot be stored');
  }
  const root = object(value, '$');
  if (root.spec !== NCHAT_SPEC) fail('$.spec', `must be "${NCHAT_SPEC}"`);
  const warnings: string[] = [];
  const version = string(root, 'spec_version', '$');
  const match = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(version);
  if (!match) fail('$.spec_version', 'must be a version like 1.0.0');
  if (Number(match[1]) !== NCHAT_SUPPORTED_MAJOR) {
    throw new DomainError(
      'import_unsupported_version',
      400,
      `nchat spec_version ${version} is not supported (supported: ${NCHAT_SUPPORTED_MAJOR}.x)`,
      { spec_version: version, supported_major: NCHAT_SUPPORTED_MAJOR },
    );
  }
  if (Number(match[2] ?? 0) > 0) warnings.push(`spec_version ${version} is newer than ${NCHAT_SPEC_VERSION}`);

  const reader = new NchatReader(warnings);
  const chat: NchatFile = {
    spec: NCHAT_SPEC,
    spec_version: version,
    exported_at: integer(root, 'exported_at', '$'),
    export_source: string(root, 'export_source', '$'),
    export_app_version: string(root, 'export_app_version', '$'),
    data: reader.data(object(root.data, '$.data')),
  };
  const counts = reader.counts(chat.data);
  if (counts.message_count === 0) throw new DomainError('import_empty', 400, 'the chat file has no messages');
  return { chat, counts, warnings };
}

// ---------------------------------------------------------------------------------------------------
// Shape checks (each error names the path)

function fail(path: string, what: string): never {
  throw importParseError(`${path} ${what}`, { path });
}

function object(value: unknown, path: string): JsonObject {
  if (!isPlainObject(value)) fail(path, 'must be an object');
  return value;
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, 'must be an array');
  return value;
}

function string(o: JsonObject, key: string, path: string, nonEmpty = false): string {
  const value = o[key];
  if (typeof value !== 'string' || (nonEmpty && value === '')) {
    fail(`${path}.${key}`, nonEmpty ? 'must be a non-empty string' : 'must be a string');
  }
  return value;
}

/** A string or null; a missing key reads as null. */
function nullableString(o: JsonObject, key: string, path: string): string | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(`${path}.${key}`, 'must be a string or null');
  return value;
}

function integer(o: JsonObject, key: string, path: string, min = 0): number {
  const value = o[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    fail(`${path}.${key}`, `must be an integer >= ${min}`);
  }
  return value;
}

/** An integer stored in an `integer` column: `min` up to 2,147,483,647. */
function int4(o: JsonObject, key: string, path: string, min = 0): number {
  const value = integer(o, key, path, min);
  if (value > INT4_MAX) fail(`${path}.${key}`, `must be an integer from ${min} to ${INT4_MAX}`);
  return value;
}

/** An integer or null; a missing key reads as null. */
function nullableInteger(o: JsonObject, key: string, path: string): number | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  return integer(o, key, path);
}

/** An `integer` column's value or null; a missing key reads as null. */
function nullableInt4(o: JsonObject, key: string, path: string): number | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  return int4(o, key, path);
}

function boolean(o: JsonObject, key: string, path: string): boolean {
  const value = o[key];
  if (typeof value !== 'boolean') fail(`${path}.${key}`, 'must be a boolean');
  return value;
}

function oneOf<T extends string>(o: JsonObject, key: string, path: string, values: readonly T[]): T {
  const value = o[key];
  if (typeof value !== 'string' || !values.includes(value as T)) {
    fail(`${path}.${key}`, `must be one of ${values.join(', ')}`);
  }
  return value as T;
}

type RefKind = 'branch' | 'floor' | 'page' | 'message' | 'line' | 'memory item';

/** Reads `data` into typed copies, then checks every `*_ref` and the tree's invariants. */
class NchatReader {
  private readonly ids: Record<RefKind, Set<string>> = {
    branch: new Set(),
    floor: new Set(),
    page: new Set(),
    message: new Set(),
    line: new Set(),
    'memory item': new Set(),
  };
  /** Refs to check once every id is known: [path, kind, ref]. */
  private readonly refs: Array<[string, RefKind, string]> = [];
  private checksumMismatches = 0;

  constructor(private readonly warnings: string[]) {}

  data(o: JsonObject): NchatData {
    const path = '$.data';
    const data = {
      title: string(o, 'title', path),
      status: oneOf(o, 'status', path, SESSION_STATUSES),
    } as NchatData;
    if (o.character_binding !== undefined) {
      data.character_binding =
        o.character_binding === null
          ? null
          : cloneJson(object(o.character_binding, `${path}.character_binding`));
    }
    data.branches = array(o.branches, `${path}.branches`).map((b, i) =>
      this.branch(b, `${path}.branches[${i}]`),
    );
    if (o.lines !== undefined && o.lines !== null) {
      data.lines = array(o.lines, `${path}.lines`).map((l, i) => this.line(l, `${path}.lines[${i}]`));
    }
    data.floors = array(o.floors, `${path}.floors`).map((f, i) => this.floor(f, `${path}.floors[${i}]`));
    if (o.variables !== undefined && o.variables !== null) {
      data.variables = array(o.variables, `${path}.variables`).map((v, i) =>
        this.variable(v, `${path}.variables[${i}]`),
      );
    }
    if (o.memories !== undefined && o.memories !== null) {
      const memories = object(o.memories, `${path}.memories`);
      data.memories = {
        items: array(memories.items, `${path}.memories.items`).map((m, i) =>
          this.memoryItem(m, `${path}.memories.items[${i}]`),
        ),
        edges: array(memories.edges, `${path}.memories.edges`).map((e, i) =>
          this.memoryEdge(e, `${path}.memories.edges[${i}]`),
        ),
      };
    }
    this.checkRefs();
    this.checkTree(data);
    if (this.checksumMismatches > 0) {
      this.warnings.push(`${this.checksumMismatches} page checksum(s) do not match their messages`);
    }
    return data;
  }

  counts(data: NchatData): NchatCounts {
    const pages = data.floors.flatMap((floor) => floor.pages);
    return {
      branch_count: data.branches.length,
      floor_count: data.floors.length,
      page_count: pages.length,
      message_count: pages.reduce((sum, page) => sum + page.messages.length, 0),
      variable_count: data.variables?.length ?? 0,
      memory_item_count: data.memories?.items.length ?? 0,
      memory_edge_count: data.memories?.edges.length ?? 0,
    };
  }

  private id(o: JsonObject, path: string, kind: RefKind): string {
    const id = string(o, '_original_id', path, true);
    if (this.ids[kind].has(id)) fail(`${path}._original_id`, `repeats the ${kind} id ${id}`);
    this.ids[kind].add(id);
    return id;
  }

  private ref(o: JsonObject, key: string, path: string, kind: RefKind, nullable: true): string | null;
  private ref(o: JsonObject, key: string, path: string, kind: RefKind, nullable: false): string;
  private ref(o: JsonObject, key: string, path: string, kind: RefKind, nullable: boolean): string | null {
    const value = nullable ? nullableString(o, key, path) : string(o, key, path, true);
    if (value !== null) this.refs.push([`${path}.${key}`, kind, value]);
    return value;
  }

  private branch(value: unknown, path: string): NchatBranch {
    const o = object(value, path);
    return {
      _original_id: this.id(o, path, 'branch'),
      name: string(o, 'name', path, true),
      source_floor_id_ref: this.ref(o, 'source_floor_id_ref', path, 'floor', true),
      head_floor_id_ref: this.ref(o, 'head_floor_id_ref', path, 'floor', true),
      created_at: integer(o, 'created_at', path),
      updated_at: integer(o, 'updated_at', path),
    };
  }

  private line(value: unknown, path: string): NchatLine {
    const o = object(value, path);
    const line: NchatLine = {
      _original_id: this.id(o, path, 'line'),
      parent_line_id_ref: this.ref(o, 'parent_line_id_ref', path, 'line', true),
      fork_floor_no: nullableInt4(o, 'fork_floor_no', path),
      start_floor_no: int4(o, 'start_floor_no', path),
      created_at: integer(o, 'created_at', path),
    };
    if ((line.parent_line_id_ref === null) !== (line.fork_floor_no === null)) {
      fail(path, 'must have both parent_line_id_ref and fork_floor_no, or neither');
    }
    return line;
  }

  private floor(value: unknown, path: string): NchatFloor {
    const o = object(value, path);
    const floor: NchatFloor = {
      _original_id: this.id(o, path, 'floor'),
      branch_id_ref: this.ref(o, 'branch_id_ref', path, 'branch', false),
      floor_no: int4(o, 'floor_no', path),
      parent_floor_id_ref: this.ref(o, 'parent_floor_id_ref', path, 'floor', true),
      line_id_ref: this.ref(o, 'line_id_ref', path, 'line', true),
      state: oneOf(o, 'state', path, FLOOR_STATES),
      token_in: int4(o, 'token_in', path),
      token_out: int4(o, 'token_out', path),
      reasoning_text: nullableString(o, 'reasoning_text', path),
      metadata: o.metadata === undefined || o.metadata === null ? {} : cloneJson(o.metadata),
      state_snapshot: o.state_snapshot === undefined ? null : cloneJson(o.state_snapshot),
      superseded_at: nullableInteger(o, 'superseded_at', path),
      superseded_by_floor_id_ref: this.ref(o, 'superseded_by_floor_id_ref', path, 'floor', true),
      created_at: integer(o, 'created_at', path),
      updated_at: integer(o, 'updated_at', path),
      pages: array(o.pages, `${path}.pages`).map((p, i) => this.page(p, `${path}.pages[${i}]`)),
    };
    const pageNos = new Set<number>();
    const activeKinds = new Set<string>();
    floor.pages.forEach((page, i) => {
      if (pageNos.has(page.page_no)) fail(`${path}.pages[${i}].page_no`, `repeats page_no ${page.page_no}`);
      pageNos.add(page.page_no);
      if (page.is_active && activeKinds.has(page.page_kind)) {
        fail(`${path}.pages[${i}].is_active`, `is a second active ${page.page_kind} page of the floor`);
      }
      if (page.is_active) activeKinds.add(page.page_kind);
    });
    return floor;
  }

  private page(value: unknown, path: string): NchatPage {
    const o = object(value, path);
    const page: NchatPage = {
      _original_id: this.id(o, path, 'page'),
      page_no: int4(o, 'page_no', path),
      page_kind: oneOf(o, 'page_kind', path, PAGE_KINDS),
      is_active: boolean(o, 'is_active', path),
      version: int4(o, 'version', path, 1),
      checksum: nullableString(o, 'checksum', path),
      created_at: integer(o, 'created_at', path),
      updated_at: integer(o, 'updated_at', path),
      messages: array(o.messages, `${path}.messages`).map((m, i) =>
        this.message(m, `${path}.messages[${i}]`),
      ),
    };
    const seqs = new Set<number>();
    page.messages.forEach((message, i) => {
      if (seqs.has(message.seq)) fail(`${path}.messages[${i}].seq`, `repeats seq ${message.seq}`);
      seqs.add(message.seq);
    });
    if (page.checksum !== null && page.checksum !== pageChecksum(page.messages)) this.checksumMismatches++;
    return page;
  }

  private message(value: unknown, path: string): NchatMessage {
    const o = object(value, path);
    const message: NchatMessage = {
      _original_id: this.id(o, path, 'message'),
      seq: int4(o, 'seq', path),
      role: oneOf(o, 'role', path, MESSAGE_ROLES),
      content: string(o, 'content', path),
      content_format: o.content_format === undefined ? 'text' : string(o, 'content_format', path, true),
      is_hidden: boolean(o, 'is_hidden', path),
      source: string(o, 'source', path, true),
      token_count: nullableInt4(o, 'token_count', path),
      token_encoding: nullableString(o, 'token_encoding', path),
      created_at: integer(o, 'created_at', path),
    };
    if (o.extra !== undefined && o.extra !== null)
      message.extra = cloneJson(object(o.extra, `${path}.extra`));
    return message;
  }

  private variable(value: unknown, path: string): NchatVariable {
    const o = object(value, path);
    const scope = oneOf(o, 'scope', path, VARIABLE_SCOPES);
    let scopeRef: string | null = null;
    if (scope === 'chat') {
      if (o.scope_id_ref !== undefined && o.scope_id_ref !== null) {
        fail(`${path}.scope_id_ref`, 'must be null for a chat variable');
      }
    } else {
      scopeRef = this.ref(o, 'scope_id_ref', path, scope, false);
    }
    if (!('value' in o)) fail(`${path}.value`, 'is missing');
    return {
      scope,
      scope_id_ref: scopeRef,
      key: string(o, 'key', path, true),
      value: cloneJson(o.value),
      updated_at: integer(o, 'updated_at', path),
    };
  }

  private memoryItem(value: unknown, path: string): NchatMemoryItem {
    const o = object(value, path);
    const item = cloneJson(o) as NchatMemoryItem;
    item._original_id = this.id(o, path, 'memory item');
    item.content = string(o, 'content', path);
    for (const key of ['summary_tier', 'lifecycle_status', 'source_job_id'] as const) {
      if (key in o) item[key] = nullableString(o, key, path);
    }
    if ('branch_id_ref' in o) item.branch_id_ref = this.ref(o, 'branch_id_ref', path, 'branch', true);
    if ('floor_id_ref' in o) item.floor_id_ref = this.ref(o, 'floor_id_ref', path, 'floor', true);
    if ('covered_floor_id_refs' in o) {
      item.covered_floor_id_refs = array(o.covered_floor_id_refs, `${path}.covered_floor_id_refs`).map(
        (ref, i) => {
          if (typeof ref !== 'string') fail(`${path}.covered_floor_id_refs[${i}]`, 'must be a string');
          this.refs.push([`${path}.covered_floor_id_refs[${i}]`, 'floor', ref]);
          return ref;
        },
      );
    }
    if ('token_count' in o) item.token_count = nullableInteger(o, 'token_count', path);
    for (const key of ['created_at', 'updated_at'] as const) if (key in o) item[key] = integer(o, key, path);
    return item;
  }

  private memoryEdge(value: unknown, path: string): NchatMemoryEdge {
    const o = object(value, path);
    const edge = cloneJson(o) as NchatMemoryEdge;
    if ('_original_id' in o) edge._original_id = string(o, '_original_id', path, true);
    edge.from_item_id_ref = this.ref(o, 'from_item_id_ref', path, 'memory item', false);
    edge.to_item_id_ref = this.ref(o, 'to_item_id_ref', path, 'memory item', false);
    edge.relation_type = string(o, 'relation_type', path, true);
    if ('created_at' in o) edge.created_at = integer(o, 'created_at', path);
    return edge;
  }

  private checkRefs(): void {
    for (const [path, kind, ref] of this.refs) {
      if (!this.ids[kind].has(ref)) fail(path, `refers to ${ref}, which is not a ${kind} of the file`);
    }
  }

  /**
   * The storage invariants an import relies on: a floor hangs under its parent (floor_no + 1) and a root
   * floor is floor 0; a floor_no appears once per line; a branch has at most one `generating` floor.
   */
  private checkTree(data: NchatData): void {
    const floors = new Map(data.floors.map((floor) => [floor._original_id, floor]));
    const lineFloors = new Set<string>();
    const generating = new Set<string>();
    data.floors.forEach((floor, i) => {
      const path = `$.data.floors[${i}]`;
      if (floor.parent_floor_id_ref !== null) {
        const parent = floors.get(floor.parent_floor_id_ref)!;
        if (parent.floor_no + 1 !== floor.floor_no) {
          fail(`${path}.floor_no`, `must be its parent's floor_no + 1 (${parent.floor_no + 1})`);
        }
      } else if (floor.floor_no !== 0) {
        fail(`${path}.floor_no`, 'must be 0 for a floor without parent');
      }
      if (floor.line_id_ref !== null) {
        const key = JSON.stringify([floor.line_id_ref, floor.floor_no]);
        if (lineFloors.has(key)) fail(`${path}.floor_no`, `repeats floor_no ${floor.floor_no} in its line`);
        lineFloors.add(key);
      }
      if (floor.state === 'generating') {
        if (generating.has(floor.branch_id_ref))
          fail(`${path}.state`, 'is a second generating floor of its branch');
        generating.add(floor.branch_id_ref);
      }
    });
    const names = new Set<string>();
    data.branches.forEach((branch, i) => {
      if (names.has(branch.name))
        fail(`$.data.branches[${i}].name`, `repeats the branch name ${branch.name}`);
      names.add(branch.name);
    });
  }
}
