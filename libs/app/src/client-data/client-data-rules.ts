import { DomainError, isNamespaceName } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  clientDataRepository,
  type ClientDataNamespaceRow,
  type Executor,
  type Tx,
} from '@hearth/persistence';
import type { AppConfig } from '@hearth/platform';

/**
 * Client data routes (docs/decisions.md "Client data and session state"): the namespace registry is
 * the account's (every Client of the account reads it, only the account itself writes it; other
 * accounts never see it), and
 * every route answers 503 `feature_unavailable` while `ENABLE_CLIENT_DATA` is off.
 */
export function requireClientDataEnabled(config: AppConfig): void {
  if (!config.clientData.enabled)
    throw new DomainError('feature_unavailable', 503, 'Client data is not enabled on this server');
}

/** An unknown name, or a name of another account: 404 `client_data_namespace_not_found`. */
export const clientDataNamespaceNotFound = (name: string) =>
  new DomainError('client_data_namespace_not_found', 404, `Namespace ${name} not found`, { name });

/** 409 `client_data_namespace_conflict`: names are unique per account. */
export const clientDataNamespaceConflict = (name: string) =>
  new DomainError('client_data_namespace_conflict', 409, `The account already has a namespace ${name}`, {
    name,
  });

/**
 * Every Client of the account reads the namespaces; only the account itself (its default Client)
 * registers, changes or deletes them, because a change reaches every session of every Project (a delete
 * removes their state): 403 `client_data_namespace_account_only`, like the Workspace registries.
 */
export function requireNamespaceWriter(actor: Actor): void {
  if (actor.kind !== 'account')
    throw new DomainError(
      'client_data_namespace_account_only',
      403,
      'Only the account’s default Client may register, change or delete namespaces',
    );
}

/** The caller's account's namespace `name` (locked with `lock`), or 404. */
export async function requireNamespaceOfAccount(
  db: Executor,
  actor: Actor,
  name: string,
  options: { lock?: 'update' } = {},
): Promise<ClientDataNamespaceRow> {
  // A name outside the pattern can name no namespace: no query (and no NUL reaches Postgres).
  const row = !isNamespaceName(name)
    ? undefined
    : options.lock
      ? await clientDataRepository.lockNamespace(db as Tx, actor.accountId, name, options.lock)
      : await clientDataRepository.findNamespace(db, actor.accountId, name);
  if (!row) throw clientDataNamespaceNotFound(name);
  return row;
}

/** What an operation log keeps of a namespace: its name and settings, never a description or a value. */
export const clientDataNamespaceRef = (row: ClientDataNamespaceRow) => ({
  name: row.name,
  replay_policy: row.replay_policy,
  max_items: row.max_items,
  max_bytes: row.max_bytes,
});
