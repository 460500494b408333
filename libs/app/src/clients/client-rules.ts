import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { ClientRow } from '@hearth/persistence';

/**
 * Managing Clients (create, rename, disable) is for the account itself, that is its default Client.
 * Any other Client may list and read its account's Clients but not change them: a Client acts only as
 * itself (spec 1 "What the service does" 3), so it cannot mint keys or switch off its siblings.
 */
export function requireAccountActor(actor: Actor): void {
  if (actor.kind !== 'account') {
    throw new DomainError('client_account_only', 403, 'Only the account’s default Client may manage Clients');
  }
}

export const clientNotFound = () => new DomainError('not_found', 404, 'Client not found');

/** The essential fields of a Client, for operation log refs (never a key). */
export const clientRef = (c: ClientRow) => ({
  id: c.id,
  account_id: c.account_id,
  name: c.name,
  status: c.status,
  is_default: c.is_default,
});
