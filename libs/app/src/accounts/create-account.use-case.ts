import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  accountsRepository,
  inTransaction,
  isUniqueViolation,
  type AccountRow,
  type Db,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { provisionAccount } from './account-provisioning';
import { accountRef, requireAccountAdmin, requireMultiAccountMode } from './account-rules';

export interface CreateAccountInput {
  id?: string;
  name: string;
  role?: 'admin' | 'user';
}

const conflict = (id: string) =>
  new DomainError('account_conflict', 409, `An account with id "${id}" already exists`);

/**
 * `POST /accounts` (multi mode): the account, its default Client and default Workspace, and the
 * `create_account` operation log, in one transaction.
 */
@Injectable()
export class CreateAccountUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: CreateAccountInput): Promise<AccountRow> {
    requireAccountAdmin(actor);
    requireMultiAccountMode(this.config);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        if (input.id !== undefined && (await accountsRepository.findAccount(tx, input.id)))
          throw conflict(input.id);
        const account = await provisionAccount(tx, {
          id: input.id,
          name: input.name,
          role: input.role ?? 'user',
        });
        await this.logs.write(tx, actor, {
          action: 'create_account',
          target_type: 'account',
          target_id: account.id,
          after_ref: accountRef(account),
        });
        return account;
      });
    } catch (error) {
      // Two creates of one id at once: the loser's insert hits the primary key.
      if (input.id !== undefined && isUniqueViolation(error)) throw conflict(input.id);
      throw error;
    }
  }
}
