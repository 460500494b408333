import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, worldbooksRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { WorldbookJournal } from './worldbook-journal';
import { checkExpectation, worldbookNotFound } from './worldbook-rules';

/**
 * `DELETE /worldbooks/:id`: without `expected_version` unconditional and idempotent (nothing to delete
 * is still a success); with it a missing book is 404 and a stale one 409. Entries cascade; the asset
 * versions stay (tags and pinned sessions may name them).
 */
@Injectable()
export class DeleteWorldbookUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
    private readonly journal: WorldbookJournal,
  ) {}

  async execute(actor: Actor, id: string, expectedVersion?: number): Promise<void> {
    await inTransaction(this.db, async ({ tx }) => {
      const book = await this.journal.lockIfExists(tx, actor, id);
      if (!book) {
        if (expectedVersion !== undefined) throw worldbookNotFound();
        return;
      }
      checkExpectation(book, { version: expectedVersion });
      await worldbooksRepository.delete(tx, id);
      await this.logs.write(tx, actor, {
        action: 'delete_worldbook',
        target_type: 'worldbook',
        target_id: id,
        before_ref: { id, name: book.name, version_no: book.version },
      });
    });
  }
}
