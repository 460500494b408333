import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { runEntryBatch } from './batch-worldbook-entries';
import type { BatchEntryOutcome } from './worldbook-entry-access';
import { WorldbookJournal } from './worldbook-journal';

/** `PUT /worldbooks/:worldbook_id/entries/batch/reorder`: a new `order` for each of 1-100 entries. */
@Injectable()
export class ReorderWorldbookEntriesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  execute(
    actor: Actor,
    worldbookId: string,
    input: { items: Array<{ id: string; order: number }>; expected_version?: number },
  ): Promise<BatchEntryOutcome> {
    const orders = new Map(input.items.map((item) => [item.id, item.order]));
    return runEntryBatch(this.db, this.journal, actor, worldbookId, {
      ids: input.items.map((item) => item.id),
      expected_version: input.expected_version,
      action: 'reorder_worldbook_entries',
      kind: 'update',
      fieldsOf: (id) => ({ order: orders.get(id) }),
    });
  }
}
