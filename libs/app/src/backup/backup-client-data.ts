import { checkAccountLimits, checkNamespaceCount, ID_PREFIX, newId, type BackupData } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { clientDataRepository, floorsRepository, type Tx } from '@hearth/persistence';

/** Rows per INSERT of restored writes (15 parameters each, well under Postgres' 65,535). */
const WRITES_PER_INSERT = 1000;

export interface RestoredClientData {
  /** Namespaces the restore registered (those the account did not have by name). */
  client_data_namespaces: number;
  session_state_writes: number;
  /** Names the account already had: its own registration (settings) is kept. */
  reused_namespaces: string[];
}

/**
 * A backup's client data (docs/decisions.md "Backup"): the namespaces by name (one the account already
 * has is used as it is, else it is registered with the backup's settings: 409
 * `client_data_namespace_limit_exceeded` past 100), then each restored session's writes on its mapped
 * floors, within the account's limits (409 `session_state_account_*_limit_exceeded`). The account's
 * usage row is locked first, so registrations and turn commits of the account wait for the restore.
 */
export async function restoreClientData(
  tx: Tx,
  actor: Actor,
  data: BackupData,
  maps: { sessionIds: Map<string, string>; floorIds: Map<string, string> },
  limits: { maxItems: number; maxBytes: number },
): Promise<RestoredClientData> {
  const namespaces = data.client_data_namespaces ?? [];
  const writes = data.sessions.flatMap((session) =>
    (session.session_state_writes ?? []).map((write) => ({ session: session._original_id, write })),
  );
  const restored: RestoredClientData = {
    client_data_namespaces: 0,
    session_state_writes: 0,
    reused_namespaces: [],
  };
  if (namespaces.length === 0) return restored;
  const accountId = actor.accountId;
  const usage = await clientDataRepository.lockUsage(tx, accountId);

  const existing = new Map(
    (
      await clientDataRepository.findNamespaces(
        tx,
        accountId,
        namespaces.map((n) => n.name),
      )
    ).map((row) => [row.name, row]),
  );
  const registered = await clientDataRepository.countNamespaces(tx, accountId);
  const created = namespaces.filter((n) => !existing.has(n.name));
  checkNamespaceCount(registered, created.length);
  const namespaceIds = new Map<string, { id: string; name: string }>();
  for (const n of namespaces) {
    const own = existing.get(n.name);
    if (own) {
      restored.reused_namespaces.push(n.name);
      namespaceIds.set(n._original_id, { id: own.id, name: own.name });
      continue;
    }
    const row = await clientDataRepository.insertNamespace(tx, {
      id: newId(ID_PREFIX.clientDataNamespace),
      account_id: accountId,
      name: n.name,
      description: n.description,
      replay_policy: n.replay_policy,
      max_items: n.max_items,
      max_bytes: n.max_bytes,
      created_by_client_id: actor.clientId,
      created_at: n.created_at,
      updated_at: n.updated_at,
    });
    namespaceIds.set(n._original_id, { id: row.id, name: row.name });
    restored.client_data_namespaces++;
  }

  const prepared = writes.map(({ write }) => {
    const json = write.present ? JSON.stringify(write.value) : null;
    return { present: write.present, json, bytes: json === null ? 0 : Buffer.byteLength(json, 'utf8') };
  });
  checkAccountLimits(usage, prepared, limits);
  const branches = await floorsRepository.branchesOfFloors(
    tx,
    writes.map(({ write }) => maps.floorIds.get(write.floor_id_ref)!),
  );
  const rows = writes.map(({ session, write }, i) => {
    const floorId = maps.floorIds.get(write.floor_id_ref)!;
    const namespace = namespaceIds.get(write.namespace_id_ref)!;
    return {
      id: newId(ID_PREFIX.sessionStateMutation),
      account_id: accountId,
      namespace_id: namespace.id,
      namespace: namespace.name,
      session_id: maps.sessionIds.get(session)!,
      branch_id: branches.get(floorId)!,
      floor_id: floorId,
      seq: write.seq,
      slot: write.slot,
      present: write.present,
      value: prepared[i].json,
      value_bytes: prepared[i].bytes,
      run_id: null,
      created_by_client_id: null,
      created_at: write.created_at,
    };
  });
  for (let i = 0; i < rows.length; i += WRITES_PER_INSERT)
    await clientDataRepository.insertMutations(tx, rows.slice(i, i + WRITES_PER_INSERT));
  restored.session_state_writes = rows.length;
  return restored;
}
