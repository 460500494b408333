import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  accountsRepository,
  inTransaction,
  type AccountRow,
  type CredentialCache,
  type Db,
} from '@hearth/persistence';
import { CONFIG, CREDENTIALS, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { accountRef, requireAccountAdmin, requireMultiAccountMode, requireSomeField } from './account-rules';

export interface UpdateAccountInput {
  name?: string;
  role?: 'admin' | 'user';
  status?: 'active' | 'disabled';
}

/**
 * `PATCH /accounts/:id` (multi mode). The default account keeps its role and status (409
 * `account_protected`); its name may change. After the commit the process's key cache is dropped,
 * so its next request sees the new status and role (other processes: on the change notification).
 */
@Injectable()
export class UpdateAccountUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CREDENTIALS) private readonly credentials: CredentialCache,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, accountId: string, input: UpdateAccountInput): Promise<AccountRow> {
    requireAccountAdmin(actor);
    requireSomeField(input, ['name', 'role', 'status']);
    requireMultiAccountMode(this.config);
    const updated = await inTransaction(this.db, async ({ tx }) => {
      const before = await accountsRepository.findAccountForUpdate(tx, accountId);
      if (!before) throw new DomainError('account_not_found', 404, 'Account not found');
      const changesRole = input.role !== undefined && input.role !== before.role;
      const changesStatus = input.status !== undefined && input.status !== before.status;
      if (before.is_default && (changesRole || changesStatus)) {
        throw new DomainError(
          'account_protected',
          409,
          'The default account’s role and status cannot be changed',
        );
      }
      const after = await accountsRepository.updateAccount(tx, accountId, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.role !== undefined ? { role: input.role } : {}),
        ...(input.status !== undefined ? { status: input.status } : {}),
        updated_at: Date.now(),
      });
      if (!after) throw new DomainError('account_not_found', 404, 'Account not found');
      await this.logs.write(tx, actor, {
        action: 'update_account',
        target_type: 'account',
        target_id: accountId,
        before_ref: accountRef(before),
        after_ref: accountRef(after),
      });
      return after;
    });
    this.credentials.invalidate();
    return updated;
  }
}
