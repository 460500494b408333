import { Inject, Injectable } from '@nestjs/common';
import { parseWorldbook } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, worldbooksRepository, type Db, type WorldbookRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readWorldbookVersionFile, replaceWorldbookEntries } from './worldbook-content';
import { WorldbookJournal } from './worldbook-journal';
import { worldbookVersionNotFound } from './worldbook-rules';

/**
 * `POST /worldbooks/:id/rollback`: a new version whose name, top-level fields and entries are those of
 * the version given (entry ids kept for uids that still exist); `rollback_worldbook`.
 */
@Injectable()
export class RollbackWorldbookUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly journal: WorldbookJournal,
  ) {}

  async execute(
    actor: Actor,
    id: string,
    input: { version_id: string; expected_version?: number },
  ): Promise<WorldbookRow> {
    return inTransaction(this.db, async ({ tx }) => {
      const book = await this.journal.lock(tx, actor, id, { version: input.expected_version });
      const target = await worldbooksRepository.findVersionSummary(tx, id, input.version_id);
      if (!target || target.account_id !== actor.accountId) throw worldbookVersionNotFound();
      const file = await readWorldbookVersionFile(tx, id, target);
      const { entries, extra } = parseWorldbook(file);
      delete extra.name;
      const changes = await replaceWorldbookEntries(
        tx,
        book,
        entries,
        Math.max(Date.now(), book.updated_at + 1),
      );
      const result = await this.journal.record(tx, actor, book, {
        action: 'rollback_worldbook',
        change_kind: 'rollback',
        target_type: 'worldbook',
        target_id: id,
        name: target.name,
        extra,
        ...changes,
        metadata: { rolled_back_to_version_id: target.id, rolled_back_to_version_no: target.version_no },
      });
      return result.book;
    });
  }
}
