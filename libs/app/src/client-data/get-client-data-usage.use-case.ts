import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { clientDataRepository, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireClientDataEnabled } from './client-data-rules';

export interface ClientDataUsage {
  /** The account's stored session state writes (every namespace, session, floor and branch). */
  items: number;
  /** Their value bytes (UTF-8 of each value's JSON). */
  bytes: number;
  max_items: number;
  max_bytes: number;
}

/** `GET /client-data/usage`: the caller's account's stored session state and the account limits. */
@Injectable()
export class GetClientDataUsageUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(actor: Actor): Promise<ClientDataUsage> {
    requireClientDataEnabled(this.config);
    const usage = await clientDataRepository.usage(this.db, actor.accountId);
    return {
      ...usage,
      max_items: this.config.clientData.accountMaxItems,
      max_bytes: this.config.clientData.accountMaxBytes,
    };
  }
}
