import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { worldbooksRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { exportFile, rowToNormalized } from './worldbook-rules';

/** `GET /export/worldbook/:id`: the ST file (entries keyed by uid); a missing book is 404 `not_found`. */
@Injectable()
export class ExportWorldbookUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<{ name: string; file: Record<string, unknown> }> {
    return worldbooksRepository.readSnapshot(this.db, async (tx) => {
      const book = await worldbooksRepository.findOfAccount(tx, actor.accountId, id);
      if (!book) throw new DomainError('not_found', 404, 'Worldbook not found');
      const entries = (await worldbooksRepository.allEntries(tx, id)).map(rowToNormalized);
      return { name: book.name, file: exportFile(book.name, book.extra, entries) };
    });
  }
}
