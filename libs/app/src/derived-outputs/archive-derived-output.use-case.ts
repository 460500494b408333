import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { derivedOutputsRepository, inTransaction, type Db, type DerivedOutputRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { DerivedOutputAccess, derivedOutputNotFound } from './derived-output-access';
import { DerivedOutputJournal } from './derived-output-journal';

/**
 * `DELETE /projects/:id/derived-outputs/:item_id` (owner; deriver on its own entries): archives the
 * entry and keeps the row. Archiving an archived entry is idempotent: it answers the entry and writes
 * nothing (no log, no event).
 */
@Injectable()
export class ArchiveDerivedOutputUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: DerivedOutputAccess,
    private readonly journal: DerivedOutputJournal,
  ) {}

  async execute(actor: Actor, projectId: string, itemId: string): Promise<DerivedOutputRow> {
    return inTransaction(this.db, async (uow) => {
      const grant = await this.access.forChange(actor, projectId, uow.tx);
      const entry = await derivedOutputsRepository.findInProjectForUpdate(uow.tx, grant.project.id, itemId);
      if (!entry) throw derivedOutputNotFound();
      this.access.assertMayChange(actor, grant, entry);
      if (entry.status === 'archived') return entry;
      const archived = await derivedOutputsRepository.update(uow.tx, entry.id, {
        status: 'archived',
        updated_at: Date.now(),
      });
      await this.journal.record(uow, actor, grant.project, 'archive', archived, ['status'], entry.status);
      return archived;
    });
  }
}
