import { DomainError } from '@hearth/domain';
import type { VariableRow, VariableScopeName } from '@hearth/persistence';

/**
 * Spec 2 variable rules (docs/decisions.md "Variables"): scopes and their priority, target
 * normalisation, value checks, limits and error codes. Pure: no I/O.
 */
export const VARIABLE_SCOPES = ['global', 'chat', 'branch', 'floor', 'page'] as const;
/** Priority from high to low (spec 2 "Variable"). */
export const VARIABLE_PRIORITY: readonly VariableScopeName[] = ['page', 'floor', 'branch', 'chat', 'global'];
export const GLOBAL_SCOPE_ID = 'global';
export const VARIABLE_BATCH_MAX_ITEMS = 100;
export const VARIABLE_LIST_DEFAULT_LIMIT = 50;
export const VARIABLE_LIST_MAX_LIMIT = 200;
export const VARIABLE_KEY_MAX_CHARS = 256;
export const VARIABLE_HOST_ID_MAX_CHARS = 200;
/** Serialised UTF-8 size limit of a value. */
export const VARIABLE_VALUE_MAX_BYTES = 256 * 1024;
export const VARIABLE_VALUE_MAX_DEPTH = 128;
/** Id prefixes of this feature. */
export const VARIABLE_ID_PREFIX = {
  variable: 'var',
  stagedWrite: 'vsw',
  promotion: 'vprm',
} as const;

// Errors.

export const variableNotFound = () => new DomainError('variable_not_found', 404, 'Variable not found');
export const variableHostNotFound = (scope: VariableScopeName, scopeId: string, index?: number) =>
  new DomainError('variable_host_not_found', 404, `The ${scope} host "${scopeId}" was not found`, {
    scope,
    scope_id: scopeId,
    ...(index === undefined ? {} : { index }),
  });
export const variableTargetLocked = (
  scope: VariableScopeName,
  scopeId: string,
  floorId: string,
  floorState: string,
  index?: number,
) =>
  new DomainError(
    'variable_target_locked',
    409,
    `Variables of a ${floorState} floor and its pages cannot be written`,
    {
      scope,
      scope_id: scopeId,
      floor_id: floorId,
      floor_state: floorState,
      ...(index === undefined ? {} : { index }),
    },
  );
export const variableContextInvalid = (message: string, details?: Record<string, unknown>) =>
  new DomainError('variable_context_invalid', 400, message, details);
export const variableValueInvalid = (message: string, details?: Record<string, unknown>) =>
  new DomainError('variable_value_invalid', 400, message, details);
export const variableBatchDuplicateTarget = (
  index: number,
  firstIndex: number,
  target: NormalisedTarget,
  key: string,
) =>
  new DomainError(
    'variable_batch_duplicate_target',
    400,
    `Batch items ${firstIndex} and ${index} write the same scope, scope_id and key`,
    { index, first_index: firstIndex, scope: target.scope, scope_id: target.scopeId, key },
  );
export const branchLocalSnapshotMissing = (sourceFloorId: string) =>
  new DomainError(
    'branch_local_snapshot_missing',
    409,
    `Floor ${sourceFloorId} has no local variable snapshot to inherit`,
    { source_floor_id: sourceFloorId },
  );

/** Floor states that lock variable writes on the floor and its pages (spec 2 "Floor states seen"). */
export const LOCKING_FLOOR_STATES: readonly string[] = ['generating', 'committed'];
export const isLockingFloorState = (state: string) => LOCKING_FLOOR_STATES.includes(state);

// Targets.

/** A write body's target as sent (spec 2 "Upsert body"). */
export interface VariableTargetInput {
  scope: VariableScopeName;
  scope_id?: string;
  session_id?: string;
  branch_id?: string;
}

export interface NormalisedTarget {
  scope: VariableScopeName;
  scopeId: string;
  /** Branch scope: the session and branch the scope_id names. */
  sessionId?: string;
  branchId?: string;
}

/** The internal scope_id of a branch host. */
export const branchScopeId = (sessionId: string, branchId: string) => `${sessionId}:${branchId}`;

/** `<session_id>:<branch_id>` split at the first colon, or null when it is not one. */
export function parseBranchScopeId(scopeId: string): { sessionId: string; branchId: string } | null {
  const at = scopeId.indexOf(':');
  if (at <= 0 || at === scopeId.length - 1) return null;
  return { sessionId: scopeId.slice(0, at), branchId: scopeId.slice(at + 1) };
}

const at = (index: number | undefined) => (index === undefined ? {} : { index });

/**
 * The normalised (scope, scope_id) of a write. `global` normalises any scope_id to `global`; chat,
 * floor and page need scope_id; session_id and branch_id belong to branch writes only; a branch write
 * gives session_id with branch_id, or the internal scope_id, and both given must agree. Anything else:
 * 400 `variable_context_invalid`.
 */
export function normaliseTarget(input: VariableTargetInput, index?: number): NormalisedTarget {
  const { scope } = input;
  if (scope !== 'branch' && (input.session_id !== undefined || input.branch_id !== undefined)) {
    throw variableContextInvalid('session_id and branch_id are only for scope branch', {
      scope,
      ...at(index),
    });
  }
  if (scope === 'branch') {
    const hasPair = input.session_id !== undefined || input.branch_id !== undefined;
    if (hasPair && (input.session_id === undefined || input.branch_id === undefined)) {
      throw variableContextInvalid('A branch write needs both session_id and branch_id', at(index));
    }
    if (hasPair) {
      const scopeId = branchScopeId(input.session_id!, input.branch_id!);
      if (input.scope_id !== undefined && input.scope_id !== scopeId) {
        throw variableContextInvalid('scope_id does not agree with session_id and branch_id', {
          scope_id: input.scope_id,
          expected_scope_id: scopeId,
          ...at(index),
        });
      }
      return { scope, scopeId, sessionId: input.session_id, branchId: input.branch_id };
    }
    if (input.scope_id === undefined) {
      throw variableContextInvalid(
        'A branch write needs session_id with branch_id, or the branch scope_id',
        at(index),
      );
    }
    const parsed = parseBranchScopeId(input.scope_id);
    if (!parsed) {
      throw variableContextInvalid('A branch scope_id is "<session_id>:<branch_id>"', {
        scope_id: input.scope_id,
        ...at(index),
      });
    }
    return { scope, scopeId: input.scope_id, ...parsed };
  }
  if (input.scope_id === undefined) {
    throw variableContextInvalid(`scope_id is required for scope ${scope}`, { scope, ...at(index) });
  }
  if (scope === 'global') return { scope, scopeId: GLOBAL_SCOPE_ID };
  return { scope, scopeId: input.scope_id };
}

export const targetIdentity = (target: NormalisedTarget, key: string) =>
  `${target.scope}\u0000${target.scopeId}\u0000${key}`;

/** The first duplicate (scope, scope_id, key) of a batch: 400 `variable_batch_duplicate_target`. */
export function requireUniqueTargets(items: Array<{ target: NormalisedTarget; key: string }>): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const identity = targetIdentity(item.target, item.key);
    const first = seen.get(identity);
    if (first !== undefined) throw variableBatchDuplicateTarget(index, first, item.target, item.key);
    seen.set(identity, index);
  });
}

/** The `scope_ref` of a branch host (`{session_id, branch_id}`), null for the other scopes. */
export function scopeRef(
  scope: VariableScopeName,
  scopeId: string,
): { session_id: string; branch_id: string } | null {
  if (scope !== 'branch') return null;
  const parsed = parseBranchScopeId(scopeId);
  return parsed ? { session_id: parsed.sessionId, branch_id: parsed.branchId } : null;
}

// Values.

function findInvalid(value: unknown, depth: number): string | null {
  if (depth > VARIABLE_VALUE_MAX_DEPTH) return `nesting deeper than ${VARIABLE_VALUE_MAX_DEPTH} levels`;
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'a number that is not finite';
  if (typeof value === 'string') return value.includes('\u0000') ? 'a string with a NUL character' : null;
  if (typeof value !== 'object') return `a ${typeof value}`;
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = findInvalid(item, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return 'an object that is not plain JSON';
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (key.includes('\u0000')) return 'a key with a NUL character';
    const problem = findInvalid(item, depth + 1);
    if (problem) return problem;
  }
  return null;
}

export interface SerialisedVariableValue {
  json: string;
  bytes: number;
}

/**
 * A value as stored: any plain JSON (null included; no NUL characters, at most 128 levels deep, at
 * most 256 KiB serialised). A missing value or anything else: 400 `variable_value_invalid`.
 */
export function serialiseVariableValue(value: unknown, index?: number): SerialisedVariableValue {
  if (value === undefined)
    throw variableValueInvalid('value is required (any JSON, null included)', at(index));
  const problem = findInvalid(value, 0);
  if (problem) throw variableValueInvalid(`value holds ${problem}`, at(index));
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > VARIABLE_VALUE_MAX_BYTES) {
    throw variableValueInvalid(
      `value is ${bytes} bytes serialised; the limit is ${VARIABLE_VALUE_MAX_BYTES}`,
      {
        bytes,
        max_bytes: VARIABLE_VALUE_MAX_BYTES,
        ...at(index),
      },
    );
  }
  return { json, bytes };
}

// Resolution.

export interface VariableLayer {
  scope: VariableScopeName;
  scopeId: string;
  items: VariableRow[];
}

export interface ResolvedVariable {
  key: string;
  value: unknown;
  source_scope: VariableScopeName;
  source_scope_id: string;
  source_scope_ref: { session_id: string; branch_id: string } | null;
  updated_at: number;
}

/**
 * Resolves keys across layers given from high to low priority: each key takes the value of the highest
 * layer holding it. Sorted by key (code unit order).
 */
export function resolveLayers(layers: VariableLayer[]): ResolvedVariable[] {
  const resolved = new Map<string, ResolvedVariable>();
  for (const layer of layers) {
    for (const item of layer.items) {
      if (resolved.has(item.key)) continue;
      resolved.set(item.key, {
        key: item.key,
        value: item.value,
        source_scope: layer.scope,
        source_scope_id: layer.scopeId,
        source_scope_ref: scopeRef(layer.scope, layer.scopeId),
        updated_at: item.updated_at,
      });
    }
  }
  return [...resolved.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The flat key → value view of layers (high to low): what the macro engine reads. */
export function flattenLayers(layers: VariableLayer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of resolveLayers(layers)) out[item.key] = item.value;
  return out;
}

/** What an operation log keeps of a variable: names and sizes, never the value. */
export const variableRef = (v: Pick<VariableRow, 'scope' | 'scope_id' | 'key'>, valueBytes?: number) => ({
  scope: v.scope,
  scope_id: v.scope_id,
  key: v.key,
  ...(valueBytes === undefined ? {} : { value_bytes: valueBytes }),
});
