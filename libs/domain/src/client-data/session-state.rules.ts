import { DomainError } from '../errors';
import { jsonNestedDeeperThan } from '../text/json-depth';
import { firstBadStringPath, isUnstorableText } from '../text/storable-text';

/**
 * Client data and session state (docs/decisions.md "Client data and session state"): the rules that
 * need no storage. A namespace is registered by the account; a turn's `session_state_writes` land on its
 * floor when it commits; the state a floor sees is the newest write of each slot on its lineage.
 */
export const CLIENT_DATA_LIMITS = {
  /** Lowercase letter first, then up to 63 of lowercase letters, digits, `_`, `.`, `-`. */
  namespaceName: /^[a-z][a-z0-9_.-]{0,63}$/,
  descriptionMaxChars: 2000,
  /** Namespaces one account may register. */
  namespacesPerAccount: 100,
  defaultMaxItems: 1000,
  maxItemsCeiling: 10_000,
  defaultMaxBytes: 1024 * 1024,
  maxBytesCeiling: 16 * 1024 * 1024,
  /** The value bytes (UTF-8 of each value's JSON) of one request's writes together. */
  requestMaxBytes: 256 * 1024,
  writesPerRequest: 100,
  /** Values nest at most this deep (the value itself is level 1), as variables. */
  valueMaxDepth: 128,
} as const;

/**
 * Namespaces of the service itself: `game_state` is public (every reader of a session sees it) and only
 * the service writes it; a client write is 409 `session_state_public_write_forbidden`, and no account
 * may register the name.
 */
export const PUBLIC_NAMESPACES: readonly string[] = ['game_state'];

export const REPLAY_POLICIES = ['replay', 'confirm', 'block'] as const;
export type ReplayPolicy = (typeof REPLAY_POLICIES)[number];

export interface SessionStateWriteInput {
  namespace: string;
  slot: string;
  value?: unknown;
  delete?: true;
}

/** A write checked and serialised, in request order. */
export interface PreparedStateWrite {
  namespace: string;
  slot: string;
  present: boolean;
  /** The value's JSON; null for a delete. */
  json: string | null;
  /** UTF-8 bytes of `json` (0 for a delete). */
  bytes: number;
}

/** What a namespace's slots hold at one floor: present slots and their value bytes. */
export interface NamespaceUsage {
  items: number;
  bytes: number;
}

/** The limits a namespace's registration sets. */
export interface NamespaceLimits {
  name: string;
  max_items: number;
  max_bytes: number;
}

/** A landed write as a retry sees it. */
export interface LandedStateWrite {
  id: string;
  namespace: string;
  slot: string;
  replay_policy: ReplayPolicy;
}

const fieldError = (index: number, field: string, message: string) =>
  new DomainError('validation_error', 400, 'Invalid session_state_writes', {
    fields: [{ field: `session_state_writes[${index}].${field}`, message }],
  });

/**
 * Checks and serialises a request's writes (after its schema: namespace, slot, exactly one of value and
 * delete). In order: a public namespace is 409 `session_state_public_write_forbidden`; a value or slot
 * Postgres cannot store (NUL, an unpaired surrogate) or nested deeper than 128 levels is 400
 * `validation_error`; values over 256 KiB together are 409 `session_state_payload_too_large`.
 */
export function prepareSessionStateWrites(writes: readonly SessionStateWriteInput[]): PreparedStateWrite[] {
  for (const [index, write] of writes.entries()) {
    if (PUBLIC_NAMESPACES.includes(write.namespace))
      throw new DomainError(
        'session_state_public_write_forbidden',
        409,
        `The namespace ${write.namespace} is public: only the service writes it`,
        { index, namespace: write.namespace },
      );
  }
  const prepared: PreparedStateWrite[] = [];
  let total = 0;
  for (const [index, write] of writes.entries()) {
    if (write.value === undefined && write.delete !== true)
      throw fieldError(index, 'value', 'exactly one of value and delete: true');
    if (isUnstorableText(write.slot))
      throw fieldError(index, 'slot', 'must not hold NUL or an unpaired surrogate');
    if (write.delete === true) {
      prepared.push({ namespace: write.namespace, slot: write.slot, present: false, json: null, bytes: 0 });
      continue;
    }
    if (jsonNestedDeeperThan(write.value, CLIENT_DATA_LIMITS.valueMaxDepth))
      throw fieldError(index, 'value', `must nest at most ${CLIENT_DATA_LIMITS.valueMaxDepth} levels`);
    const bad = firstBadStringPath(write.value, '$', isUnstorableText);
    if (bad !== null) throw fieldError(index, 'value', `holds NUL or an unpaired surrogate at ${bad}`);
    const json = JSON.stringify(write.value);
    const bytes = Buffer.byteLength(json, 'utf8');
    total += bytes;
    prepared.push({ namespace: write.namespace, slot: write.slot, present: true, json, bytes });
  }
  if (total > CLIENT_DATA_LIMITS.requestMaxBytes)
    throw new DomainError(
      'session_state_payload_too_large',
      409,
      `The writes' values are ${total} bytes together; the limit is ${CLIENT_DATA_LIMITS.requestMaxBytes}`,
      { bytes: total, max_bytes: CLIENT_DATA_LIMITS.requestMaxBytes },
    );
  return prepared;
}

/** The namespaces a request writes in, each once, in first-seen order. */
export const namespacesOf = (writes: readonly { namespace: string }[]): string[] => [
  ...new Set(writes.map((w) => w.namespace)),
];

/**
 * Each written namespace's usage before and after the writes, from the slots the parent floor sees
 * (`current`: the newest write of each slot, deletes included).
 */
export function usageAfterWrites(
  current: readonly { namespace: string; slot: string; present: boolean; value_bytes: number }[],
  writes: readonly PreparedStateWrite[],
): Map<string, { before: NamespaceUsage; after: NamespaceUsage }> {
  const written = new Set(namespacesOf(writes));
  const slots = new Map<string, Map<string, number>>();
  for (const name of written) slots.set(name, new Map());
  for (const row of current) {
    if (row.present) slots.get(row.namespace)?.set(row.slot, row.value_bytes);
  }
  const usageOf = (held: Map<string, number>): NamespaceUsage => {
    let bytes = 0;
    for (const b of held.values()) bytes += b;
    return { items: held.size, bytes };
  };
  const before = new Map([...slots].map(([name, held]) => [name, usageOf(held)]));
  for (const write of writes) {
    const held = slots.get(write.namespace)!;
    if (write.present) held.set(write.slot, write.bytes);
    else held.delete(write.slot);
  }
  return new Map(
    [...slots].map(([name, held]) => [name, { before: before.get(name)!, after: usageOf(held) }]),
  );
}

/**
 * A namespace's state after the writes may not exceed its limits, unless the writes made it smaller
 * (a lowered limit never blocks a write that frees space): 409
 * `session_state_namespace_item_limit_exceeded` / `session_state_namespace_byte_limit_exceeded`.
 */
export function checkNamespaceLimits(
  usage: Map<string, { before: NamespaceUsage; after: NamespaceUsage }>,
  namespaces: ReadonlyMap<string, NamespaceLimits>,
): void {
  for (const [name, { before, after }] of usage) {
    const limits = namespaces.get(name)!;
    if (after.items > limits.max_items && after.items > before.items)
      throw new DomainError(
        'session_state_namespace_item_limit_exceeded',
        409,
        `The namespace ${name} would hold ${after.items} slots; its limit is ${limits.max_items}`,
        { namespace: name, items: after.items, max_items: limits.max_items },
      );
    if (after.bytes > limits.max_bytes && after.bytes > before.bytes)
      throw new DomainError(
        'session_state_namespace_byte_limit_exceeded',
        409,
        `The namespace ${name} would hold ${after.bytes} bytes; its limit is ${limits.max_bytes}`,
        { namespace: name, bytes: after.bytes, max_bytes: limits.max_bytes },
      );
  }
}

/**
 * The account stores every landed write (older floors and other branches keep theirs): its stored
 * values (writes with a value; a delete stores none and is never refused) and their bytes may not pass
 * the account's limits: 409 `session_state_account_item_limit_exceeded` /
 * `session_state_account_byte_limit_exceeded`.
 */
export function checkAccountLimits(
  usage: NamespaceUsage,
  writes: readonly Pick<PreparedStateWrite, 'present' | 'bytes'>[],
  limits: { maxItems: number; maxBytes: number },
): void {
  const added = writes.filter((w) => w.present).length;
  if (added === 0) return;
  const items = usage.items + added;
  const bytes = usage.bytes + writes.reduce((sum, w) => sum + w.bytes, 0);
  if (items > limits.maxItems)
    throw new DomainError(
      'session_state_account_item_limit_exceeded',
      409,
      `The account would store ${items} session state writes; its limit is ${limits.maxItems}`,
      { items, max_items: limits.maxItems },
    );
  if (bytes > limits.maxBytes)
    throw new DomainError(
      'session_state_account_byte_limit_exceeded',
      409,
      `The account's session state would hold ${bytes} bytes; its limit is ${limits.maxBytes}`,
      { bytes, max_bytes: limits.maxBytes },
    );
}

/**
 * A retry gives a floor a new reply while the floor keeps the writes its turn landed. Writes in a
 * namespace with replay policy `block` refuse the retry (409 `session_state_replay_blocked`); those of a
 * `confirm` namespace need their ids in `confirmed_session_state_mutation_ids` (409
 * `session_state_replay_confirmation_required`, details naming the ids still to confirm).
 */
export function checkStateReplay(
  floorId: string,
  landed: readonly LandedStateWrite[],
  confirmedIds: readonly string[],
): void {
  const blocked = landed.filter((w) => w.replay_policy === 'block');
  if (blocked.length > 0)
    throw new DomainError(
      'session_state_replay_blocked',
      409,
      `Floor ${floorId} wrote session state that may not be replayed`,
      { floor_id: floorId, mutation_ids: blocked.map((w) => w.id), namespaces: namespacesOf(blocked) },
    );
  const confirmed = new Set(confirmedIds);
  const unconfirmed = landed.filter((w) => w.replay_policy === 'confirm' && !confirmed.has(w.id));
  if (unconfirmed.length > 0)
    throw new DomainError(
      'session_state_replay_confirmation_required',
      409,
      `Floor ${floorId} wrote session state whose replay must be confirmed`,
      {
        floor_id: floorId,
        mutation_ids: unconfirmed.map((w) => w.id),
        namespaces: namespacesOf(unconfirmed),
      },
    );
}
