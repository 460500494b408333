import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { accountsRepository, inTransaction, type CredentialCache, type Db } from '@hearth/persistence';
import { CONFIG, CREDENTIALS, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { accountRef, requireAccountAdmin, requireMultiAccountMode } from './account-rules';

/**
 * `DELETE /accounts/:id` (multi mode): a hard delete of an account that owns nothing any more
 * (`accountsRepository.countOwnedResources`); its Clients, keys and default Workspace go with it.
 * The row is locked first, so no session or Project can be added between the check and the delete.
 * After the commit the process's key cache is dropped (the account's keys are gone).
 */
@Injectable()
export class DeleteAccountUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CREDENTIALS) private readonly credentials: CredentialCache,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, accountId: string): Promise<{ id: string; deleted: true }> {
    requireAccountAdmin(actor);
    requireMultiAccountMode(this.config);
    const deleted = await inTransaction(this.db, async ({ tx }) => {
      const account = await accountsRepository.findAccountForUpdate(tx, accountId);
      if (!account) throw new DomainError('account_not_found', 404, 'Account not found');
      if (account.is_default)
        throw new DomainError('account_protected', 409, 'The default account cannot be deleted');
      const owned = await accountsRepository.countOwnedResources(tx, accountId);
      if (Object.values(owned).some((n) => n > 0)) {
        throw new DomainError(
          'account_has_resources',
          409,
          'The account still owns resources; delete them first',
          {
            resources: owned,
          },
        );
      }
      await accountsRepository.deleteAccount(tx, accountId);
      await this.logs.write(tx, actor, {
        action: 'delete_account',
        target_type: 'account',
        target_id: accountId,
        before_ref: accountRef(account),
      });
      return { id: accountId, deleted: true as const };
    });
    this.credentials.invalidate();
    return deleted;
  }
}
