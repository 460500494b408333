import {
  characterBookToWorldbook,
  ID_PREFIX,
  importParseError,
  isPlainObject,
  newId,
  parseWorldbook,
  type NormalizedWorldbook,
  type NormalizedWorldbookEntry,
} from '@hearth/domain';
import { worldbooksRepository, type Executor, type Tx, type WorldbookRow } from '@hearth/persistence';
import { normalizedToRow, replayVersions, sameEntry, worldbookVersionNotFound } from './worldbook-rules';

/**
 * An imported worldbook: an ST world file (`entries` keyed by uid or an array), a card's
 * `character_book`, or a whole card carrying one in `data.character_book`.
 */
export function parseImportedWorldbook(data: Record<string, unknown>): NormalizedWorldbook {
  if (data.entries === undefined) {
    const card = isPlainObject(data.data) ? data.data : data;
    if (card.character_book !== undefined) return characterBookToWorldbook(card.character_book);
    throw importParseError('worldbook entries are missing: expected an object keyed by uid or an array', {
      field: 'entries',
    });
  }
  return parseWorldbook(data);
}

/**
 * Makes the book's entries exactly `entries` (matched by uid: kept ids for kept uids, new ids for new
 * ones, removed uids deleted). Unchanged entries are not rewritten. Returns what changed.
 */
export async function replaceWorldbookEntries(
  tx: Tx,
  book: WorldbookRow,
  entries: NormalizedWorldbookEntry[],
  now: number,
): Promise<{ upserts: NormalizedWorldbookEntry[]; deleted_uids: number[] }> {
  const existing = new Map((await worldbooksRepository.allEntries(tx, book.id)).map((r) => [r.uid, r]));
  const kept = new Set(entries.map((e) => e.uid));
  const upserts = entries.filter((e) => {
    const row = existing.get(e.uid);
    return !row || !sameEntry(row, e);
  });
  const deleted_uids = [...existing.keys()].filter((uid) => !kept.has(uid));
  await worldbooksRepository.deleteEntriesByUid(tx, book.id, deleted_uids);
  await worldbooksRepository.upsertEntries(
    tx,
    upserts.map((e) =>
      normalizedToRow(e, {
        id: existing.get(e.uid)?.id ?? newId(ID_PREFIX.worldbookEntry),
        worldbook_id: book.id,
        account_id: book.account_id,
        created_at: existing.get(e.uid)?.created_at ?? now,
        updated_at: now,
      }),
    ),
  );
  return { upserts, deleted_uids };
}

/**
 * The file a stored version holds (its snapshot replayed with the deltas up to it). Other features
 * (tags, sessions pinned to a version, backups) read worldbook versions through this.
 */
export async function readWorldbookVersionFile(
  db: Executor,
  worldbookId: string,
  version: { version_no: number; payload?: unknown },
): Promise<Record<string, unknown>> {
  const head: { version_no: number; payload: unknown } | undefined =
    version.payload !== undefined
      ? { version_no: version.version_no, payload: version.payload }
      : (await worldbooksRepository.versionChain(db, worldbookId, version.version_no, version.version_no))[0];
  if (!head) throw worldbookVersionNotFound();
  const payload = head.payload as { format: string; snapshot_version_no?: number };
  if (payload.format === 'worldbook_snapshot') return replayVersions([head]);
  const chain = await worldbooksRepository.versionChain(
    db,
    worldbookId,
    payload.snapshot_version_no ?? 1,
    version.version_no,
  );
  return replayVersions(chain);
}
