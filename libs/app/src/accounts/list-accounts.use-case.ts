import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { accountsRepository, type AccountRow, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireAccountAdmin } from './account-rules';

export interface AccountList {
  items: AccountRow[];
  total: number;
  limit: number;
  offset: number;
}

/** `GET /accounts`: every account in `multi` mode, only the default account in `single` mode. */
@Injectable()
export class ListAccountsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(actor: Actor, page: { limit: number; offset: number }): Promise<AccountList> {
    requireAccountAdmin(actor);
    if (this.config.accountMode === 'single') {
      const account = await accountsRepository.findDefaultAccount(this.db);
      const all = account ? [account] : [];
      return { items: all.slice(page.offset, page.offset + page.limit), total: all.length, ...page };
    }
    const [items, total] = await Promise.all([
      accountsRepository.listAccounts(this.db, page),
      accountsRepository.countAccounts(this.db),
    ]);
    return { items, total, ...page };
  }
}
