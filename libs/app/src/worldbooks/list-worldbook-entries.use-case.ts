import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  worldbooksRepository,
  type Db,
  type WorldbookEntryListQuery,
  type WorldbookEntryRow,
  type WorldbookRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { worldbookNotFound } from './worldbook-rules';

/** `GET /worldbooks/:worldbook_id/entries`: filters, `q` over keys, comment and content, paging. */
@Injectable()
export class ListWorldbookEntriesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    worldbookId: string,
    query: WorldbookEntryListQuery,
  ): Promise<{ rows: WorldbookEntryRow[]; total: number; book: WorldbookRow }> {
    const book = await worldbooksRepository.findOfAccount(this.db, actor.accountId, worldbookId);
    if (!book) throw worldbookNotFound();
    const q = query.q?.toLowerCase();
    const page = await worldbooksRepository.listEntries(this.db, worldbookId, {
      ...query,
      q: q || undefined,
    });
    return { ...page, book };
  }
}
