import { Inject, Injectable } from '@nestjs/common';
import type { WorldbookEntryFields } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { runEntryBatch } from './batch-worldbook-entries';
import type { BatchEntryOutcome } from './worldbook-entry-access';
import { WorldbookJournal } from './worldbook-journal';
import { requireEntryField } from './update-worldbook-entry.use-case';

/** `PATCH /worldbooks/:worldbook_id/entries/batch/update`: the same fields on 1-100 entries. */
@Injectable()
export class BatchUpdateWorldbookEntriesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  execute(
    actor: Actor,
    worldbookId: string,
    input: { ids: string[]; fields: Partial<WorldbookEntryFields>; expected_version?: number },
  ): Promise<BatchEntryOutcome> {
    requireEntryField(input.fields, 'fields');
    return runEntryBatch(this.db, this.journal, actor, worldbookId, {
      ids: input.ids,
      expected_version: input.expected_version,
      action: 'batch_update_worldbook_entries',
      kind: 'update',
      fieldsOf: () => input.fields,
    });
  }
}
