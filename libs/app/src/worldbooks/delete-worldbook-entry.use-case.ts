import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, worldbooksRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { WorldbookJournal } from './worldbook-journal';
import { worldbookEntryNotFound } from './worldbook-rules';

/** `DELETE /worldbooks/:worldbook_id/entries/:id?expected_version=`: `delete_worldbook_entry`. */
@Injectable()
export class DeleteWorldbookEntryUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  async execute(
    actor: Actor,
    worldbookId: string,
    id: string,
    expectedVersion?: number,
  ): Promise<{ id: string; deleted: true; worldbook_version: number }> {
    return inTransaction(this.db, async ({ tx }) => {
      const book = await this.journal.lock(tx, actor, worldbookId, { version: expectedVersion });
      const entry = await worldbooksRepository.findEntry(tx, worldbookId, id);
      if (!entry) throw worldbookEntryNotFound();
      await worldbooksRepository.deleteEntries(tx, worldbookId, [id]);
      const result = await this.journal.record(tx, actor, book, {
        action: 'delete_worldbook_entry',
        change_kind: 'update',
        target_type: 'worldbook_entry',
        target_id: id,
        metadata: { uid: entry.uid },
        upserts: [],
        deleted_uids: [entry.uid],
      });
      return { id, deleted: true, worldbook_version: result.book.version };
    });
  }
}
