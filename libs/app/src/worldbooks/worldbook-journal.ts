import { Injectable } from '@nestjs/common';
import {
  ID_PREFIX,
  newId,
  worldbookEntryToSt,
  type JsonObject,
  type NormalizedWorldbookEntry,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  worldbooksRepository,
  type AssetVersionRow,
  type Tx,
  type WorldbookRow,
} from '@hearth/persistence';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  checkExpectation,
  exportFile,
  rowToNormalized,
  SNAPSHOT_MAX_CHAIN,
  SNAPSHOT_MIN_ENTRIES,
  worldbookNotFound,
  type WorldbookExpectation,
  type WorldbookVersionPayload,
} from './worldbook-rules';

export interface WorldbookChange {
  action: string;
  change_kind: 'import' | 'update' | 'rollback';
  target_type: 'worldbook' | 'worldbook_entry';
  target_id: string;
  metadata?: Record<string, unknown>;
  /** The book's name and top-level fields after the write (unchanged when absent). */
  name?: string;
  extra?: JsonObject;
  /** Entries written (new or changed), as they now are; and uids removed. */
  upserts: NormalizedWorldbookEntry[];
  deleted_uids: number[];
  forceSnapshot?: boolean;
}

/**
 * Every worldbook write goes through here: lock the book row, compare the expected version, and, once
 * the caller has changed the entries, bump `version`/`updated_at`, write the operation log and the new
 * asset version (a full snapshot or a delta on the latest snapshot) in the same transaction.
 */
@Injectable()
export class WorldbookJournal {
  /** How long a write waits for the book's row lock before answering 503 `resource_busy`. */
  lockTimeoutMs = 10_000;

  constructor(private readonly logs: OperationLogWriter) {}

  /** The account's book locked for this transaction, or undefined when there is none. */
  async lockIfExists(tx: Tx, actor: Actor, id: string): Promise<WorldbookRow | undefined> {
    await worldbooksRepository.setLockTimeout(tx, this.lockTimeoutMs);
    return worldbooksRepository.lockOfAccount(tx, actor.accountId, id);
  }

  /** The book locked (404 `worldbook_not_found` when missing) at the expected version (else 409). */
  async lock(tx: Tx, actor: Actor, id: string, expected: WorldbookExpectation = {}): Promise<WorldbookRow> {
    const book = await this.lockIfExists(tx, actor, id);
    if (!book) throw worldbookNotFound();
    checkExpectation(book, expected);
    return book;
  }

  async record(
    tx: Tx,
    actor: Actor,
    book: WorldbookRow,
    change: WorldbookChange,
  ): Promise<{ book: WorldbookRow; version: AssetVersionRow }> {
    const versionNo = book.version + 1;
    const now = Math.max(Date.now(), book.updated_at + 1);
    const name = change.name ?? book.name;
    const extra = change.extra ?? book.extra;
    const versionId = newId(ID_PREFIX.worldbookVersion);
    const log = await this.logs.write(tx, actor, {
      action: change.action,
      target_type: change.target_type,
      target_id: change.target_id,
      before_ref: { id: book.id, name: book.name, version_no: book.version },
      after_ref: { id: book.id, name, version_no: versionNo, version_id: versionId },
      metadata: { worldbook_id: book.id, ...change.metadata },
    });
    const written = change.upserts.length + change.deleted_uids.length;
    const entryCount = await worldbooksRepository.countEntries(tx, book.id);
    const snapshot =
      change.forceSnapshot ||
      book.delta_entry_count + written > Math.max(SNAPSHOT_MIN_ENTRIES, entryCount) ||
      versionNo - book.snapshot_version >= SNAPSHOT_MAX_CHAIN;
    let payload: WorldbookVersionPayload;
    if (snapshot) {
      const entries = (await worldbooksRepository.allEntries(tx, book.id)).map(rowToNormalized);
      payload = { format: 'worldbook_snapshot', file: exportFile(name, extra, entries) };
    } else {
      payload = {
        format: 'worldbook_delta',
        snapshot_version_no: book.snapshot_version,
        name,
        extra,
        upserts: change.upserts.map(worldbookEntryToSt),
        deleted_uids: change.deleted_uids,
      };
    }
    const version = await assetVersionsRepository.insert(tx, {
      id: versionId,
      account_id: book.account_id,
      asset_kind: 'worldbook',
      asset_id: book.id,
      version_no: versionNo,
      name,
      payload: JSON.stringify(payload),
      source_format: 'st_world',
      change_kind: change.change_kind,
      created_by_operation_id: log.id,
      created_at: now,
    });
    const updated = await worldbooksRepository.update(tx, book.id, {
      name,
      extra: JSON.stringify(extra),
      version: versionNo,
      updated_at: now,
      snapshot_version: snapshot ? versionNo : book.snapshot_version,
      delta_entry_count: snapshot ? 0 : book.delta_entry_count + written,
    });
    return { book: updated, version };
  }
}
