import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { worldbooksRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { worldbookEntryNotFound, worldbookNotFound } from './worldbook-rules';
import type { EntryWrite } from './worldbook-entry-access';

/** `GET /worldbooks/:worldbook_id/entries/:id`. */
@Injectable()
export class GetWorldbookEntryUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, worldbookId: string, id: string): Promise<EntryWrite> {
    const book = await worldbooksRepository.findOfAccount(this.db, actor.accountId, worldbookId);
    if (!book) throw worldbookNotFound();
    const entry = await worldbooksRepository.findEntry(this.db, worldbookId, id);
    if (!entry) throw worldbookEntryNotFound();
    return { entry, book };
  }
}
