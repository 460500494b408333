/**
 * The variable overlay one prompt assembly shares (reference §g "Variables", spec 2 "Macro compatibility").
 * `getvar`/`.name` read the local view (branch-centred), `getglobalvar`/`$name` the global view. Writes are
 * never applied: each one is staged on top of the views and recorded in order, so later macros of the same
 * turn see it (ST runs macros at assembly, §j) while the stored variables stay untouched.
 *
 * Value rules follow ST's variable scope (variables.js `createVariableScope`): reads turn numeric strings
 * into numbers and missing values into ''; `add` appends to a JSON array, adds numerically when both sides
 * are numbers, otherwise concatenates; `inc`/`dec` are `add ±1`. Keys: flat key first, then a dot path into
 * a JSON value (object or array, stored natively or as a JSON string); a path write stores the root key.
 */
import { JSON_MAX_DEPTH, jsonNestedDeeperThan } from '../../text/json-depth';
export type VariableScope = 'local' | 'global';
export type VariableOp = 'set' | 'add' | 'inc' | 'dec' | 'delete';
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** What a trace shows for a value: objects and arrays as stable JSON strings (sorted keys). */
export type PreviewValue = string | number | boolean | null;

export interface StagedMutation {
  scope: VariableScope;
  /** The stored key that changes (the root key for a path write). */
  key: string;
  /** The name as the macro wrote it (differs from `key` for a path write). */
  name: string;
  op: VariableOp;
  /** The operand the macro gave (set/add value, 1/-1 for inc/dec, null for delete). */
  value: PreviewValue;
  before: PreviewValue;
  after: PreviewValue;
  /** Whether the key existed before this write. */
  existed: boolean;
  deleted: boolean;
  /** The macro that wrote it (`setvar`, `.name=`, …). */
  macro: string;
}

export interface MutationPreview {
  local: Record<string, PreviewValue>;
  global: Record<string, PreviewValue>;
  /** Keys a delete removed (their preview value is null). */
  deleted: { local: string[]; global: string[] };
}

export interface VariableViews {
  local?: Record<string, unknown> | null;
  global?: Record<string, unknown> | null;
}

const DELETED = Symbol('deleted');
type Slot = JsonValue | typeof DELETED;

/** JSON with object keys sorted at every level. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

export function toPreview(value: JsonValue | undefined): PreviewValue {
  if (value === undefined) return null;
  if (value !== null && typeof value === 'object') return stableStringify(value);
  return value;
}

function toJson(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map(toJson);
  if (typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = toJson(v);
    return out;
  }
  return String(value);
}

function clone<T extends JsonValue>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A read value as ST's macros see it: numbers stay numbers, numeric strings become numbers, missing is ''. */
export type ReadValue = string | number;

/**
 * The JSON text of each object or array a read has turned into text. Values in an overlay are never
 * changed in place (a write stores a new root), so the text stays right; 13,000 comparisons with a
 * 350 KB object took 27 s when each one serialised it again.
 */
const jsonTexts = new WeakMap<object, string>();

function jsonTextOf(value: object): string {
  let text = jsonTexts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    jsonTexts.set(value, text);
  }
  return text;
}

/** ST `normalizeVariableValue`: `(v === '' || isNaN(Number(v))) ? (v || '') : Number(v)`, objects as JSON text. */
export function normalizeRead(value: JsonValue | undefined): ReadValue {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number') return value;
  const text =
    typeof value === 'string' ? value : typeof value === 'boolean' ? String(value) : jsonTextOf(value);
  if (text === '' || Number.isNaN(Number(text))) return text;
  return Number(text);
}

interface Container {
  root: JsonValue;
  asString: boolean;
}

/**
 * The most segments a variable name's path may have (`a.b` has one); a longer name is a flat key.
 * Not in ST (its variable macros have no paths); a bound so hostile text cannot stall or overflow.
 */
export const MAX_VARIABLE_PATH_SEGMENTS = 128;

/** A JSON text is a container only when it nests at most JSON_MAX_DEPTH levels (else it is text). */
function parsedContainer(text: string): object | null {
  const parsed = JSON.parse(text) as unknown;
  if (parsed === null || typeof parsed !== 'object') return null;
  return jsonNestedDeeperThan(parsed, JSON_MAX_DEPTH) ? null : parsed;
}

function parseContainer(value: JsonValue | undefined): Container | null {
  if (value !== null && typeof value === 'object') return { root: clone(value), asString: false };
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return null;
    try {
      const parsed = parsedContainer(trimmed);
      if (parsed) return { root: toJson(parsed), asString: true };
    } catch {
      return null;
    }
  }
  return null;
}

function childOf(node: JsonValue, segment: string): JsonValue | undefined {
  if (Array.isArray(node)) {
    if (!/^\d+$/.test(segment)) return undefined;
    return node[Number(segment)];
  }
  if (node !== null && typeof node === 'object') {
    return Object.prototype.hasOwnProperty.call(node, segment) ? node[segment] : undefined;
  }
  return undefined;
}

class ScopeOverlay {
  private readonly staged = new Map<string, Slot>();
  /**
   * The container each key's current value was last read as, for path reads: a JSON text is parsed
   * once, not at every `{{getvar::a.b}}` (11,000 of them into a 350 KB text never finished). Read-only:
   * writes parse their own copy.
   */
  private readonly readable = new Map<string, { raw: JsonValue | undefined; root: JsonValue | null }>();

  constructor(
    readonly scope: VariableScope,
    private readonly base: Record<string, JsonValue>,
  ) {}

  /** The current stored value of a flat key (undefined when absent). */
  raw(key: string): JsonValue | undefined {
    if (this.staged.has(key)) {
      const slot = this.staged.get(key)!;
      return slot === DELETED ? undefined : slot;
    }
    return Object.prototype.hasOwnProperty.call(this.base, key) ? this.base[key] : undefined;
  }

  hasKey(key: string): boolean {
    return this.raw(key) !== undefined;
  }

  /** The key's value as a container to read a path in (never to change), or null. */
  readContainer(key: string): JsonValue | null {
    const raw = this.raw(key);
    const cached = this.readable.get(key);
    if (cached && cached.raw === raw) return cached.root;
    let root: JsonValue | null = null;
    if (raw !== null && typeof raw === 'object') root = raw;
    else if (typeof raw === 'string') root = parseContainer(raw)?.root ?? null;
    this.readable.set(key, { raw, root });
    return root;
  }

  write(key: string, value: JsonValue | typeof DELETED): void {
    this.staged.set(key, value);
  }

  changedKeys(): string[] {
    return [...this.staged.keys()];
  }

  /**
   * Splits `a.b.c` into an existing root key and a path, longest existing root first. A name of more
   * than MAX_VARIABLE_PATH_SEGMENTS dots is a flat key only: every cut is a lookup of a prefix, so a
   * 60,000-segment name in one message took 75 s of the event loop.
   */
  resolvePath(name: string): { key: string; path: string[] } | null {
    if (!name.includes('.')) return null;
    const parts = name.split('.');
    if (parts.length - 1 > MAX_VARIABLE_PATH_SEGMENTS) return null;
    for (let cut = parts.length - 1; cut >= 1; cut--) {
      const key = parts.slice(0, cut).join('.');
      if (this.hasKey(key)) return { key, path: parts.slice(cut) };
    }
    return null;
  }
}

/** Why a write was refused: the value's length, its nesting, or the overlay's write budget. */
export type WriteLimit = 'value_length' | 'depth' | 'write_budget';

export interface WriteResult {
  /** What the macro returns (inc/dec: the new value as ST normalises it). */
  result: ReadValue;
}

/**
 * One overlay per assembly: base views plus staged writes, and the ordered mutation log.
 */
export class VariableOverlay {
  private readonly scopes: Record<VariableScope, ScopeOverlay>;
  private readonly log: StagedMutation[] = [];
  /**
   * Characters staged so far (each write's value before and after, as its trace shows them). Every
   * write on a large value re-reads and re-writes all of it: 12,500 `{{addvar}}` on one JSON array took
   * ~10 s and 400 MB before writes had a budget.
   */
  private writtenChars = 0;

  constructor(
    views: VariableViews = {},
    private readonly limits: {
      maxValueLength?: number;
      /** Characters all writes of the overlay may stage in all (their values before and after). */
      maxWrittenChars?: number;
      onLimit?: (scope: VariableScope, name: string, reason: WriteLimit) => void;
    } = {},
  ) {
    this.scopes = {
      local: new ScopeOverlay('local', toJson(views.local ?? {}) as Record<string, JsonValue>),
      global: new ScopeOverlay('global', toJson(views.global ?? {}) as Record<string, JsonValue>),
    };
  }

  /** The stored value for a name: flat key first, then a path into a JSON value. */
  lookup(scope: VariableScope, name: string): JsonValue | undefined {
    const overlay = this.scopes[scope];
    const flat = overlay.raw(name);
    if (flat !== undefined) return flat;
    const resolved = overlay.resolvePath(name);
    if (!resolved) return undefined;
    const root = overlay.readContainer(resolved.key);
    if (root === null) return undefined;
    let node: JsonValue | undefined = root;
    for (const segment of resolved.path) {
      if (node === undefined) return undefined;
      node = childOf(node, segment);
    }
    return node;
  }

  get(scope: VariableScope, name: string): ReadValue {
    return normalizeRead(this.lookup(scope, name));
  }

  has(scope: VariableScope, name: string): boolean {
    return this.lookup(scope, name) !== undefined;
  }

  set(scope: VariableScope, name: string, value: JsonValue, macro: string): void {
    if (this.budgetSpent(scope, name)) return;
    this.store(scope, name, 'set', value, value, macro);
  }

  /** ST `add`: JSON array → push; both numeric → sum; otherwise string concatenation. */
  add(
    scope: VariableScope,
    name: string,
    value: string | number,
    macro: string,
    op: VariableOp = 'add',
  ): ReadValue {
    if (this.budgetSpent(scope, name)) return '';
    const current = this.get(scope, name);
    const currentValue: ReadValue = current === '' ? 0 : current;
    if (typeof currentValue === 'string') {
      const stored = this.lookup(scope, name);
      const array = Array.isArray(stored) ? clone(stored) : parseArray(currentValue);
      if (array) {
        array.push(value);
        const next = Array.isArray(stored) ? array : JSON.stringify(array);
        this.store(scope, name, op, value, next, macro);
        return normalizeRead(next);
      }
    }
    const increment = Number(value);
    if (Number.isNaN(increment) || Number.isNaN(Number(currentValue))) {
      const text = String(currentValue === 0 ? '' : currentValue) + String(value);
      this.store(scope, name, op, value, text, macro);
      return normalizeRead(text);
    }
    const sum = Number(currentValue) + increment;
    if (Number.isNaN(sum)) return '';
    this.store(scope, name, op, value, sum, macro);
    return sum;
  }

  delete(scope: VariableScope, name: string, macro: string): boolean {
    if (this.budgetSpent(scope, name)) return false;
    const overlay = this.scopes[scope];
    if (overlay.hasKey(name)) {
      const before = overlay.raw(name);
      overlay.write(name, DELETED);
      this.record(scope, name, name, 'delete', null, before, undefined, true, macro);
      return true;
    }
    const resolved = overlay.resolvePath(name);
    if (!resolved) return false;
    const rootBefore = overlay.raw(resolved.key);
    const container = parseContainer(rootBefore);
    if (!container) return false;
    const parent = walk(container.root, resolved.path.slice(0, -1));
    const last = resolved.path[resolved.path.length - 1];
    if (parent === undefined || childOf(parent, last) === undefined) return false;
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else if (parent !== null && typeof parent === 'object') delete parent[last];
    const rootAfter: JsonValue = container.asString ? JSON.stringify(container.root) : container.root;
    overlay.write(resolved.key, rootAfter);
    this.record(scope, resolved.key, name, 'delete', null, rootBefore, rootAfter, true, macro);
    return true;
  }

  mutationCount(): number {
    return this.log.length;
  }

  /** Characters the staged writes have used of the write budget so far. */
  writtenCharacters(): number {
    return this.writtenChars;
  }

  mutations(): StagedMutation[] {
    return this.log.map((m) => ({ ...m }));
  }

  preview(): MutationPreview {
    const out: MutationPreview = { local: {}, global: {}, deleted: { local: [], global: [] } };
    for (const scope of ['local', 'global'] as const) {
      const overlay = this.scopes[scope];
      for (const key of overlay.changedKeys().sort()) {
        const value = overlay.raw(key);
        out[scope][key] = toPreview(value);
        if (value === undefined) out.deleted[scope].push(key);
      }
    }
    return out;
  }

  /** The views with every staged write applied (what the caller would persist on commit). */
  snapshot(scope: VariableScope): Record<string, JsonValue> {
    const overlay = this.scopes[scope];
    const out: Record<string, JsonValue> = {};
    const keys = new Set([...Object.keys(overlay['base']), ...overlay.changedKeys()]);
    for (const key of [...keys].sort()) {
      const value = overlay.raw(key);
      if (value !== undefined) out[key] = clone(value);
    }
    return out;
  }

  private store(
    scope: VariableScope,
    name: string,
    op: VariableOp,
    operand: JsonValue,
    next: JsonValue,
    macro: string,
  ): void {
    const max = this.limits.maxValueLength;
    if (max !== undefined && typeof next === 'string' && next.length > max) {
      this.limits.onLimit?.(scope, name, 'value_length');
      return;
    }
    const overlay = this.scopes[scope];
    if (!overlay.hasKey(name)) {
      const resolved = overlay.resolvePath(name);
      const rootBefore = resolved ? overlay.raw(resolved.key) : undefined;
      const container = resolved ? parseContainer(rootBefore) : null;
      if (resolved && container) {
        const parent = walk(container.root, resolved.path.slice(0, -1), true);
        const last = resolved.path[resolved.path.length - 1];
        if (parent !== undefined && assign(parent, last, next)) {
          if (jsonNestedDeeperThan(container.root, JSON_MAX_DEPTH)) {
            // A path write that nests the value past the bound is refused like a too-long value.
            this.limits.onLimit?.(scope, name, 'depth');
            return;
          }
          const rootAfter: JsonValue = container.asString ? JSON.stringify(container.root) : container.root;
          overlay.write(resolved.key, rootAfter);
          this.record(scope, resolved.key, name, op, operand, rootBefore, rootAfter, true, macro);
          return;
        }
      }
    }
    const before = overlay.raw(name);
    overlay.write(name, next);
    this.record(scope, name, name, op, operand, before, next, before !== undefined, macro);
  }

  /** Whether the write budget is used up (the write is then refused and reported). */
  private budgetSpent(scope: VariableScope, name: string): boolean {
    const max = this.limits.maxWrittenChars;
    if (max === undefined || this.writtenChars <= max) return false;
    this.limits.onLimit?.(scope, name, 'write_budget');
    return true;
  }

  private record(
    scope: VariableScope,
    key: string,
    name: string,
    op: VariableOp,
    operand: JsonValue,
    before: JsonValue | undefined,
    after: JsonValue | undefined,
    existed: boolean,
    macro: string,
  ): void {
    const entry = {
      value: toPreview(operand),
      before: toPreview(before),
      after: toPreview(after),
    };
    for (const preview of [entry.value, entry.before, entry.after])
      this.writtenChars += typeof preview === 'string' ? preview.length : 8;
    this.log.push({
      scope,
      key,
      name,
      op,
      ...entry,
      existed,
      deleted: after === undefined,
      macro,
    });
  }
}

function parseArray(text: string): JsonValue[] | null {
  if (!text.trim().startsWith('[')) return null;
  try {
    const parsed = parsedContainer(text);
    return Array.isArray(parsed) ? (toJson(parsed) as JsonValue[]) : null;
  } catch {
    return null;
  }
}

function walk(root: JsonValue, path: string[], create = false): JsonValue | undefined {
  let node: JsonValue | undefined = root;
  for (const segment of path) {
    if (node === undefined || node === null || typeof node !== 'object') return undefined;
    let next = childOf(node, segment);
    if (next === undefined && create) {
      next = {};
      if (!assign(node, segment, next)) return undefined;
    }
    node = next;
  }
  return node;
}

function assign(parent: JsonValue, segment: string, value: JsonValue): boolean {
  if (Array.isArray(parent)) {
    if (!/^\d+$/.test(segment)) return false;
    const index = Number(segment);
    if (index > parent.length) return false;
    parent[index] = value;
    return true;
  }
  if (parent !== null && typeof parent === 'object') {
    parent[segment] = value;
    return true;
  }
  return false;
}
