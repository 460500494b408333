import { Inject, Injectable } from '@nestjs/common';
import { validationError, type WorldbookEntryFields } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, worldbooksRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { WorldbookJournal } from './worldbook-journal';
import {
  applyEntryFields,
  ENTRY_FIELD_NAMES,
  rowToNormalized,
  worldbookEntryNotFound,
} from './worldbook-rules';
import type { EntryWrite } from './worldbook-entry-access';

export type UpdateWorldbookEntryInput = Partial<WorldbookEntryFields> & { expected_version?: number };

/** At least one entry field (expected_version alone is not a change): else 400 `validation_error`. */
export function requireEntryField(fields: Partial<WorldbookEntryFields>, where = ''): void {
  if (!ENTRY_FIELD_NAMES.some((name) => fields[name] !== undefined)) {
    throw validationError(`at least one entry field is required${where}`, {
      fields: [{ field: where || 'body', problems: ['at least one entry field is required'] }],
    });
  }
}

/** `PATCH /worldbooks/:worldbook_id/entries/:id`: the fields given; `update_worldbook_entry`. */
@Injectable()
export class UpdateWorldbookEntryUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  async execute(
    actor: Actor,
    worldbookId: string,
    id: string,
    input: UpdateWorldbookEntryInput,
  ): Promise<EntryWrite> {
    const { expected_version, ...fields } = input;
    requireEntryField(fields);
    return inTransaction(this.db, async ({ tx }) => {
      const book = await this.journal.lock(tx, actor, worldbookId, { version: expected_version });
      const before = await worldbooksRepository.findEntry(tx, worldbookId, id);
      if (!before) throw worldbookEntryNotFound();
      const entry = applyEntryFields(before, fields, Math.max(Date.now(), book.updated_at + 1));
      await worldbooksRepository.updateEntries(tx, [entry]);
      const result = await this.journal.record(tx, actor, book, {
        action: 'update_worldbook_entry',
        change_kind: 'update',
        target_type: 'worldbook_entry',
        target_id: id,
        metadata: {
          uid: entry.uid,
          fields: Object.keys(fields).filter((k) => fields[k as keyof typeof fields] !== undefined),
        },
        upserts: [rowToNormalized(entry)],
        deleted_uids: [],
      });
      return { entry, book: result.book };
    });
  }
}
