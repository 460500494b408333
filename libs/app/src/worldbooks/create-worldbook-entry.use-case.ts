import { Inject, Injectable } from '@nestjs/common';
import {
  ID_PREFIX,
  newId,
  normalizeWorldbookEntry,
  validationError,
  type WorldbookEntryFields,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, worldbooksRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { WorldbookJournal } from './worldbook-journal';
import {
  checkWorldbookEntryCreation,
  newStEntryTemplate,
  normalizedToRow,
  rowToNormalized,
} from './worldbook-rules';
import type { EntryWrite } from './worldbook-entry-access';

/** `keys` and `content` are required (400 `validation_error` naming them when absent). */
export type CreateWorldbookEntryInput = Partial<WorldbookEntryFields> & { expected_version?: number };

/**
 * `POST /worldbooks/:id/entries`: spec 3 defaults for absent fields, uid = highest + 1 (0 in an empty book);
 * a full book (WORLDBOOK_IMPORT_MAX_ENTRIES) or a uid past the stored integer is 400 (`checkWorldbookEntryCreation`).
 */
@Injectable()
export class CreateWorldbookEntryUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  async execute(actor: Actor, worldbookId: string, input: CreateWorldbookEntryInput): Promise<EntryWrite> {
    const { expected_version, ...given } = input;
    const missing = (['keys', 'content'] as const).filter((f) => given[f] === undefined || given[f] === null);
    if (missing.length > 0)
      throw validationError(`${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required`, {
        fields: missing.map((field) => ({ field, problems: [`${field} is required`] })),
      });
    const fields = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
    return inTransaction(this.db, async ({ tx }) => {
      const book = await this.journal.lock(tx, actor, worldbookId, { version: expected_version });
      const uid = ((await worldbooksRepository.maxUid(tx, book.id)) ?? -1) + 1;
      checkWorldbookEntryCreation(await worldbooksRepository.countEntries(tx, book.id), uid);
      const now = Math.max(Date.now(), book.updated_at + 1);
      const normalized = {
        ...normalizeWorldbookEntry(newStEntryTemplate(uid), uid),
        ...fields,
        ...(fields.delay_until_recursion === 0 ? { delay_until_recursion: null } : {}),
      };
      const entry = await worldbooksRepository.insertEntry(
        tx,
        normalizedToRow(normalized, {
          id: newId(ID_PREFIX.worldbookEntry),
          worldbook_id: book.id,
          account_id: book.account_id,
          created_at: now,
          updated_at: now,
        }),
      );
      const result = await this.journal.record(tx, actor, book, {
        action: 'create_worldbook_entry',
        change_kind: 'update',
        target_type: 'worldbook_entry',
        target_id: entry.id,
        metadata: { uid },
        upserts: [rowToNormalized(entry)],
        deleted_uids: [],
      });
      return { entry, book: result.book };
    });
  }
}
