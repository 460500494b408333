import { Inject, Injectable } from '@nestjs/common';
import { validationError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, type Db, type WorldbookRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { replaceWorldbookEntries } from './worldbook-content';
import { WorldbookJournal } from './worldbook-journal';
import { parseWorldbookPayload } from './worldbook-rules';

export interface UpdateWorldbookInput {
  name: string;
  data: Record<string, unknown>;
  expected_version?: number;
  expected_updated_at?: number;
}

/**
 * `PUT /worldbooks/:id`: replaces the name, the top-level fields and every entry from `data`, when the
 * stored version (or legacy updated_at) is the one expected; +1 version, `update_worldbook`.
 */
@Injectable()
export class UpdateWorldbookUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  async execute(actor: Actor, id: string, input: UpdateWorldbookInput): Promise<WorldbookRow> {
    if (input.expected_version === undefined && input.expected_updated_at === undefined) {
      throw validationError('expected_version (or the legacy expected_updated_at) is required', {
        fields: [
          { field: 'expected_version', problems: ['expected_version or expected_updated_at is required'] },
        ],
      });
    }
    const { book: parsed, extra } = parseWorldbookPayload(input.data);
    return inTransaction(this.db, async ({ tx }) => {
      const book = await this.journal.lock(tx, actor, id, {
        version: input.expected_version,
        updatedAt: input.expected_updated_at,
      });
      const changes = await replaceWorldbookEntries(
        tx,
        book,
        parsed.entries,
        Math.max(Date.now(), book.updated_at + 1),
      );
      const result = await this.journal.record(tx, actor, book, {
        action: 'update_worldbook',
        change_kind: 'update',
        target_type: 'worldbook',
        target_id: id,
        name: input.name,
        extra,
        ...changes,
        metadata: {
          entry_count: parsed.entries.length,
          changed_entries: changes.upserts.length,
          deleted_entries: changes.deleted_uids.length,
        },
      });
      return result.book;
    });
  }
}
