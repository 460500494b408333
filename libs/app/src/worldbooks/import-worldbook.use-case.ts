import { Inject, Injectable } from '@nestjs/common';
import {
  checkWorldbookImportEntries,
  checkWorldbookStoredUids,
  ID_PREFIX,
  isPlainObject,
  newId,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  inTransaction,
  worldbooksRepository,
  type Db,
  type WorldbookRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { parseImportedWorldbook } from './worldbook-content';
import { exportParsedFile, normalizedToRow, type WorldbookVersionPayload } from './worldbook-rules';

export interface ImportWorldbookInput {
  name?: string;
  data: Record<string, unknown>;
}

/** A book's name, as every route takes it: 1-200 characters. */
const WORLDBOOK_NAME_MAX_CHARS = 200;

/**
 * The name a file gives its book: cut to 200 characters (a name the book's own PUT would refuse
 * could not be saved back as read), `Unnamed Worldbook` when it has none.
 */
function bookNameOfFile(name: string | null | undefined): string {
  const cut = [...(name ?? '')].slice(0, WORLDBOOK_NAME_MAX_CHARS).join('');
  return cut.trim() ? cut : 'Unnamed Worldbook';
}

/** `POST /import/worldbook`: a new book at version 1 (a full snapshot), its entries, `import_worldbook`. */
@Injectable()
export class ImportWorldbookUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: ImportWorldbookInput): Promise<WorldbookRow & { entry_count: number }> {
    checkWorldbookImportEntries(importedEntries(input.data));
    const parsed = parseImportedWorldbook(input.data);
    checkWorldbookStoredUids(parsed.entries);
    const name = input.name ?? bookNameOfFile(parsed.name);
    const extra = { ...parsed.extra };
    delete extra.name;
    const now = Date.now();
    const id = newId(ID_PREFIX.worldbook);
    const versionId = newId(ID_PREFIX.worldbookVersion);
    const book = await inTransaction(this.db, async ({ tx }) => {
      const row = await worldbooksRepository.insert(tx, {
        id,
        account_id: actor.accountId,
        name,
        source: 'ext_frontend',
        version: 1,
        extra: JSON.stringify(extra),
        snapshot_version: 1,
        delta_entry_count: 0,
        created_at: now,
        updated_at: now,
      });
      await worldbooksRepository.upsertEntries(
        tx,
        parsed.entries.map((e) =>
          normalizedToRow(e, {
            id: newId(ID_PREFIX.worldbookEntry),
            worldbook_id: id,
            account_id: actor.accountId,
            created_at: now,
            updated_at: now,
          }),
        ),
      );
      const log = await this.logs.write(tx, actor, {
        action: 'import_worldbook',
        target_type: 'worldbook',
        target_id: id,
        after_ref: { id, name, version_no: 1, version_id: versionId },
        metadata: { entry_count: parsed.entries.length },
      });
      const payload: WorldbookVersionPayload = {
        format: 'worldbook_snapshot',
        file: exportParsedFile(name, extra, parsed.entries),
      };
      await assetVersionsRepository.insert(tx, {
        id: versionId,
        account_id: actor.accountId,
        asset_kind: 'worldbook',
        asset_id: id,
        version_no: 1,
        name,
        payload: JSON.stringify(payload),
        source_format: 'st_world',
        change_kind: 'import',
        created_by_operation_id: log.id,
        created_at: now,
      });
      return row;
    });
    return { ...book, entry_count: parsed.entries.length };
  }
}

/** The entries `parseImportedWorldbook` reads: the file's `entries`, else a card's `character_book.entries`. */
function importedEntries(data: Record<string, unknown>): unknown {
  if (data.entries !== undefined) return data.entries;
  const card = isPlainObject(data.data) ? data.data : data;
  return isPlainObject(card.character_book) ? card.character_book.entries : undefined;
}
