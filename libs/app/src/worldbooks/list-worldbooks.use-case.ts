import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  worldbooksRepository,
  type Db,
  type WorldbookListQuery,
  type WorldbookRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';

/** `GET /worldbooks`: the account's books (summaries), paged. */
@Injectable()
export class ListWorldbooksUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  execute(actor: Actor, query: WorldbookListQuery): Promise<{ rows: WorldbookRow[]; total: number }> {
    return worldbooksRepository.listOfAccount(this.db, actor.accountId, query);
  }
}
