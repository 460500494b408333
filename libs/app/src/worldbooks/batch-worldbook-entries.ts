import type { WorldbookEntryFields } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, worldbooksRepository, type Db, type WorldbookEntryRow } from '@hearth/persistence';
import type { BatchEntryOutcome, BatchEntryResult } from './worldbook-entry-access';
import type { WorldbookJournal } from './worldbook-journal';
import { applyEntryFields, rowToNormalized } from './worldbook-rules';

/**
 * The shared shape of the batch routes: lock the book, find the ids among its entries (ids of other
 * books or accounts are `not_found` and never touched), change the found ones, and record one version
 * when anything changed (a batch that finds nothing writes nothing).
 */
export async function runEntryBatch(
  db: Db,
  journal: WorldbookJournal,
  actor: Actor,
  worldbookId: string,
  input: {
    ids: string[];
    expected_version?: number;
    action: string;
    kind: 'update' | 'delete';
    fieldsOf?: (id: string) => Partial<WorldbookEntryFields>;
  },
): Promise<BatchEntryOutcome> {
  return inTransaction(db, async ({ tx }) => {
    const book = await journal.lock(tx, actor, worldbookId, { version: input.expected_version });
    const found = new Map(
      (await worldbooksRepository.findEntries(tx, worldbookId, input.ids)).map((r) => [r.id, r]),
    );
    const now = Math.max(Date.now(), book.updated_at + 1);
    const changed: WorldbookEntryRow[] = [];
    const results: BatchEntryResult[] = input.ids.map((id, index) => {
      const row = found.get(id);
      if (!row) return { index, id, action: 'not_found', data: null };
      if (input.kind === 'delete') {
        changed.push(row);
        return { index, id, action: 'deleted', data: null };
      }
      const next = applyEntryFields(row, input.fieldsOf?.(id) ?? {}, now);
      changed.push(next);
      return { index, id, action: 'updated', data: next };
    });
    if (changed.length === 0) return { results, book };
    if (input.kind === 'delete')
      await worldbooksRepository.deleteEntries(
        tx,
        worldbookId,
        changed.map((r) => r.id),
      );
    else await worldbooksRepository.updateEntries(tx, changed);
    const recorded = await journal.record(tx, actor, book, {
      action: input.action,
      change_kind: 'update',
      target_type: 'worldbook',
      target_id: worldbookId,
      metadata: { requested: input.ids.length, changed: changed.length, entry_ids: changed.map((r) => r.id) },
      upserts: input.kind === 'delete' ? [] : changed.map(rowToNormalized),
      deleted_uids: input.kind === 'delete' ? changed.map((r) => r.uid) : [],
    });
    return { results, book: recorded.book };
  });
}
