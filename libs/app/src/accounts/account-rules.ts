import { DomainError, validationError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { accountsRepository, type AccountRow, type Tx } from '@hearth/persistence';
import type { AppConfig } from '@hearth/platform';

/**
 * Who may use the account routes (spec 3 "Accounts", admin role only): the default Client of an
 * admin account. Any other Client acts only as itself (spec 1 "What the service does" 3), so it is
 * refused like a non-admin, with 403 `account_forbidden`.
 */
export function requireAccountAdmin(actor: Actor): void {
  if (actor.accountRole !== 'admin' || actor.kind !== 'account') {
    throw new DomainError('account_forbidden', 403, 'Account routes are open only to the admin role');
  }
}

/** In `single` mode accounts cannot be created, changed or deleted. */
export function requireMultiAccountMode(config: AppConfig): void {
  if (config.accountMode !== 'multi') {
    throw new DomainError(
      'account_mode_restricted',
      409,
      'ACCOUNT_MODE is single: accounts cannot be created, changed or deleted',
    );
  }
}

/** In `single` mode only the default account is visible; other ids answer 404 like missing ones. */
export function visibleAccount(config: AppConfig, account: AccountRow | undefined): AccountRow {
  if (!account || (config.accountMode === 'single' && !account.is_default)) {
    throw new DomainError('account_not_found', 404, 'Account not found');
  }
  return account;
}

/** PATCH bodies need at least one field (spec 3: "at least one"). */
export function requireSomeField(patch: object, fields: readonly string[]): void {
  const given = fields.filter((f) => (patch as Record<string, unknown>)[f] !== undefined);
  if (given.length === 0) {
    throw validationError(`At least one of ${fields.join(', ')} is required`, {
      fields: [{ field: fields.join('|'), problems: ['at least one field is required'] }],
    });
  }
}

/** The essential fields of an account, for operation log refs. */
export const accountRef = (a: AccountRow) => ({
  id: a.id,
  name: a.name,
  role: a.role,
  status: a.status,
  is_default: a.is_default,
});

/**
 * For a write of the caller's own account inside `tx` (rows that reference the account): the account
 * row key-share locked and still there. An account delete running meanwhile either comes first, and
 * the caller's key no longer stands for an account (401 `unauthorized`), or waits for the write and
 * then removes its rows with the account. Without it the race answered 500 (a foreign-key violation).
 */
export async function requireLiveAccount(tx: Tx, accountId: string): Promise<void> {
  if (!(await accountsRepository.findAccountForKeyShare(tx, accountId)))
    throw new DomainError('unauthorized', 401, 'The account of this API key no longer exists');
}
