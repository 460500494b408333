import {
  checkAccountLimits,
  checkNamespaceLimits,
  checkStateReplay,
  DomainError,
  ID_PREFIX,
  namespacesOf,
  newId,
  prepareSessionStateWrites,
  usageAfterWrites,
  type NamespaceLimits,
  type PreparedStateWrite,
  type SessionStateWriteInput,
} from '@hearth/domain';
import {
  classifyDatabaseError,
  clientDataRepository,
  transcriptRepository,
  type ClientDataNamespaceRow,
  type Executor,
  type FloorRow,
  type SessionStateMutationRow,
  type Tx,
} from '@hearth/persistence';
import type { AppConfig } from '@hearth/platform';

/**
 * A turn's `session_state_writes` (spec 2; docs/decisions.md "Client data and session state"): checked
 * before the model is called, landed on the turn's floor in its commit transaction.
 */
export interface TurnStateWrites {
  /** The session's account: namespaces and limits are its. */
  accountId: string;
  writes: PreparedStateWrite[];
  /** The id of each written namespace when checked: one deleted and registered again meanwhile is gone. */
  namespaceIds: Map<string, string>;
}

/** A landed write as the turn's result shows it. */
export interface LandedStateWriteView {
  id: string;
  namespace: string;
  slot: string;
  present: boolean;
}

const notRegistered = (name: string) =>
  new DomainError(
    'session_state_namespace_not_registered',
    404,
    `The namespace ${name} is not registered for this session's account`,
    { namespace: name },
  );

/**
 * Checks a respond's writes before anything is written: the schema (exactly one of `value` and
 * `delete: true`, 400), client data enabled (503 `feature_unavailable`), public namespaces, values and
 * size (`prepareSessionStateWrites`), every namespace registered in the session's account (404
 * `session_state_namespace_not_registered`), and the limits against the state the parent floor sees and
 * the account's usage (409; checked again, under locks, when the turn commits). Null for no writes.
 */
export async function prepareTurnStateWrites(
  db: Executor,
  config: AppConfig,
  accountId: string,
  writes: readonly SessionStateWriteInput[] | null,
  parentFloor: Pick<FloorRow, 'line_id' | 'floor_no' | 'session_id'> | null,
): Promise<TurnStateWrites | null> {
  checkWriteShapes(writes);
  if (!writes || writes.length === 0) return null;
  if (!config.clientData.enabled)
    throw new DomainError('feature_unavailable', 503, 'Client data is not enabled on this server');
  const prepared = prepareSessionStateWrites(writes);
  const namespaces = await namespacesOrThrow(db, accountId, namespacesOf(prepared));
  await checkNamespaceLimitsAt(db, prepared, namespaces, parentFloor);
  checkAccountLimits(await clientDataRepository.usage(db, accountId), prepared, accountLimits(config));
  return {
    accountId,
    writes: prepared,
    namespaceIds: new Map([...namespaces].map(([name, row]) => [name, row.id])),
  };
}

/**
 * Lands the writes on the committed floor, in the commit's transaction: the namespaces are share-locked
 * (one deleted meanwhile, even if registered again, is 404 `session_state_namespace_not_registered`),
 * their limits are checked against the floor's lineage (the branch lock keeps it still), then the
 * account's usage row is locked and its limits checked, and the writes are inserted in request order
 * (the usage lock, which orders every turn of the account that writes, is held for the shortest part).
 * A failure that is not a rule's answer (nor a lock wait, which stays `commit_busy`) is 500
 * `session_state_stage_failed`, with the database's error as its `cause`.
 */
export async function landTurnStateWrites(
  tx: Tx,
  config: AppConfig,
  pending: TurnStateWrites,
  floor: FloorRow,
  meta: { runId: string; clientId: string; now: number },
): Promise<SessionStateMutationRow[]> {
  try {
    const names = namespacesOf(pending.writes);
    const namespaces = new Map<string, ClientDataNamespaceRow>();
    for (const name of names) {
      const row = await clientDataRepository.lockNamespace(tx, pending.accountId, name, 'share');
      if (!row || row.id !== pending.namespaceIds.get(name)) throw notRegistered(name);
      namespaces.set(name, row);
    }
    await checkNamespaceLimitsAt(tx, pending.writes, namespaces, floor);
    const usage = await clientDataRepository.lockUsage(tx, pending.accountId);
    checkAccountLimits(usage, pending.writes, accountLimits(config));
    return await clientDataRepository.insertMutations(
      tx,
      pending.writes.map((write, index) => ({
        id: newId(ID_PREFIX.sessionStateMutation),
        account_id: pending.accountId,
        namespace_id: namespaces.get(write.namespace)!.id,
        namespace: write.namespace,
        session_id: floor.session_id,
        branch_id: floor.branch_id,
        floor_id: floor.id,
        seq: index + 1,
        slot: write.slot,
        present: write.present,
        value: write.json,
        value_bytes: write.bytes,
        run_id: meta.runId,
        created_by_client_id: meta.clientId,
        created_at: meta.now,
      })),
    );
  } catch (error) {
    if (error instanceof DomainError || classifyDatabaseError(error) === 'busy') throw error;
    throw Object.assign(
      new DomainError(
        'session_state_stage_failed',
        500,
        "The turn's session state writes could not be saved",
      ),
      { cause: error },
    );
  }
}

/**
 * A retry of a floor keeps the writes its turn landed: those of `block` namespaces refuse it, those of
 * `confirm` namespaces need their ids in `confirmed_session_state_mutation_ids` (409s).
 */
export async function checkRetryStateReplay(
  db: Executor,
  floorId: string,
  confirmedIds: readonly string[] | null | undefined,
): Promise<void> {
  const landed = await clientDataRepository.landedWritesOfFloor(db, floorId);
  if (landed.length > 0) checkStateReplay(floorId, landed, confirmedIds ?? []);
}

export const landedWriteViews = (rows: readonly SessionStateMutationRow[]): LandedStateWriteView[] =>
  rows.map((row) => ({ id: row.id, namespace: row.namespace, slot: row.slot, present: row.present }));

/** Each item has exactly one of `value` and `delete: true` (400 `validation_error`). */
function checkWriteShapes(writes: readonly SessionStateWriteInput[] | null): void {
  const fields = (writes ?? []).flatMap((write, i) =>
    (write.value !== undefined) === (write.delete === true) ||
    (write.delete !== undefined && write.delete !== true)
      ? [{ field: `session_state_writes[${i}]`, message: 'exactly one of value and delete: true' }]
      : [],
  );
  if (fields.length > 0)
    throw new DomainError('validation_error', 400, 'Invalid session_state_writes', { fields });
}

async function namespacesOrThrow(
  db: Executor,
  accountId: string,
  names: string[],
): Promise<Map<string, ClientDataNamespaceRow>> {
  const rows = await clientDataRepository.findNamespaces(db, accountId, names);
  const byName = new Map(rows.map((row) => [row.name, row]));
  for (const name of names) if (!byName.has(name)) throw notRegistered(name);
  return byName;
}

const accountLimits = (config: AppConfig) => ({
  maxItems: config.clientData.accountMaxItems,
  maxBytes: config.clientData.accountMaxBytes,
});

/**
 * Each written namespace's limits against the slots `floor`'s lineage sees (the parent floor before the
 * turn; the committed floor, which has no writes yet, when landing).
 */
async function checkNamespaceLimitsAt(
  db: Executor,
  writes: PreparedStateWrite[],
  namespaces: ReadonlyMap<string, ClientDataNamespaceRow>,
  floor: Pick<FloorRow, 'line_id' | 'floor_no' | 'session_id'> | null,
): Promise<void> {
  const current = floor
    ? await clientDataRepository.slotsOnLineage(
        db,
        floor.session_id,
        await transcriptRepository.lineageRanges(db, floor),
        [...namespaces.values()].map((row) => row.id),
      )
    : [];
  const limits = new Map<string, NamespaceLimits>([...namespaces.values()].map((row) => [row.name, row]));
  checkNamespaceLimits(usageAfterWrites(current, writes), limits);
}
