import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { accountsRepository, type AccountRow, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireAccountAdmin, visibleAccount } from './account-rules';

/** `GET /accounts/:id`. In `single` mode only the default account is found. */
@Injectable()
export class GetAccountUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(actor: Actor, accountId: string): Promise<AccountRow> {
    requireAccountAdmin(actor);
    return visibleAccount(this.config, await accountsRepository.findAccount(this.db, accountId));
  }
}
