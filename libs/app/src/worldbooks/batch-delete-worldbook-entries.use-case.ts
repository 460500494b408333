import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { runEntryBatch } from './batch-worldbook-entries';
import type { BatchEntryOutcome } from './worldbook-entry-access';
import { WorldbookJournal } from './worldbook-journal';

/** `POST /worldbooks/:worldbook_id/entries/batch/delete`: 1-100 entries. */
@Injectable()
export class BatchDeleteWorldbookEntriesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  execute(
    actor: Actor,
    worldbookId: string,
    input: { ids: string[]; expected_version?: number },
  ): Promise<BatchEntryOutcome> {
    return runEntryBatch(this.db, this.journal, actor, worldbookId, {
      ids: input.ids,
      expected_version: input.expected_version,
      action: 'batch_delete_worldbook_entries',
      kind: 'delete',
    });
  }
}
