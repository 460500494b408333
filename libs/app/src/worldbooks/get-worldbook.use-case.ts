import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { worldbooksRepository, type Db, type WorldbookRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { detailData, worldbookNotFound } from './worldbook-rules';

/** `GET /worldbooks/:id`: the summary and `data`, the raw payload built from the entry rows. */
@Injectable()
export class GetWorldbookUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<{ book: WorldbookRow; data: Record<string, unknown> }> {
    // One snapshot of book and entries: a repeatable-read transaction.
    return worldbooksRepository.readSnapshot(this.db, async (tx) => {
      const book = await worldbooksRepository.findOfAccount(tx, actor.accountId, id);
      if (!book) throw worldbookNotFound();
      return { book, data: detailData(book, await worldbooksRepository.allEntries(tx, id)) };
    });
  }
}
