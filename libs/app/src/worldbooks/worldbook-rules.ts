import {
  checkWorldbookImportEntries,
  checkWorldbookStoredUids,
  cloneJson,
  DomainError,
  exportWorldbook,
  isPlainObject,
  jsonEqual,
  parseWorldbook,
  WORLDBOOK_IMPORT_MAX_ENTRIES,
  WORLDBOOK_UID_MAX,
  worldbookEntryToSt,
  type JsonObject,
  type NormalizedWorldbook,
  type NormalizedWorldbookEntry,
  type WorldbookEntryFields,
} from '@hearth/domain';
import type { WorldbookEntryRecord, WorldbookEntryRow, WorldbookRow } from '@hearth/persistence';

/** Worldbook rules shared by the use cases (docs/decisions.md "Worldbooks"). Pure functions. */

export const worldbookNotFound = () => new DomainError('worldbook_not_found', 404, 'Worldbook not found');
export const worldbookEntryNotFound = () => new DomainError('not_found', 404, 'Worldbook entry not found');
export const worldbookVersionNotFound = () =>
  new DomainError('asset_version_not_found', 404, 'Worldbook version not found');
export const worldbookConflict = (book: WorldbookRow) =>
  new DomainError('worldbook_conflict', 409, 'The worldbook was changed since the version given', {
    current_version: book.version,
    current_updated_at: book.updated_at,
  });
export const worldbookValidationError = (message: string, details?: unknown) =>
  new DomainError('worldbook_validation_error', 400, message, details);

/**
 * A book grown one entry at a time stays within what an import or a PUT of it would accept: creating an
 * entry in a book of WORLDBOOK_IMPORT_MAX_ENTRIES entries, or whose next uid (highest + 1) would pass
 * WORLDBOOK_UID_MAX (the stored integer; the insert failed with 500), is 400 `worldbook_validation_error`.
 */
export function checkWorldbookEntryCreation(entryCount: number, uid: number): void {
  if (entryCount >= WORLDBOOK_IMPORT_MAX_ENTRIES) {
    throw worldbookValidationError(
      `the worldbook already has ${entryCount} entries; at most ${WORLDBOOK_IMPORT_MAX_ENTRIES}`,
      {
        field: 'entries',
        max_entries: WORLDBOOK_IMPORT_MAX_ENTRIES,
      },
    );
  }
  if (uid > WORLDBOOK_UID_MAX) {
    throw worldbookValidationError(`the next entry uid ${uid} is above ${WORLDBOOK_UID_MAX}`, {
      field: 'uid',
      max_uid: WORLDBOOK_UID_MAX,
    });
  }
}

/** Global fields of spec 3's worldbook detail (ST keeps them as settings; a book may carry them). */
export const WORLDBOOK_GLOBAL_FIELDS = [
  'scanDepth',
  'caseSensitive',
  'matchWholeWords',
  'recursive',
  'maxRecursionSteps',
] as const;

/** A new snapshot is written when the deltas since the last one hold more entries than this or the book. */
export const SNAPSHOT_MIN_ENTRIES = 200;
/** … or when the chain since the last snapshot is this long. */
export const SNAPSHOT_MAX_CHAIN = 100;

/** What the book's write expects (`expected_version` preferred, `expected_updated_at` legacy). */
export interface WorldbookExpectation {
  version?: number;
  updatedAt?: number;
}

export function checkExpectation(book: WorldbookRow, expected: WorldbookExpectation): void {
  if (expected.version !== undefined && expected.version !== book.version) throw worldbookConflict(book);
  if (expected.updatedAt !== undefined && expected.updatedAt !== book.updated_at)
    throw worldbookConflict(book);
}

// ---- entries: rows, normalised entries, ST entries ----

/** An ST entry with every field ST writes for a new entry (external-formats.md §c defaults). */
export function newStEntryTemplate(uid: number): JsonObject {
  return {
    uid,
    key: [],
    keysecondary: [],
    comment: '',
    content: '',
    constant: false,
    vectorized: false,
    selective: true,
    selectiveLogic: 0,
    addMemo: false,
    order: 100,
    position: 0,
    disable: false,
    ignoreBudget: false,
    excludeRecursion: false,
    preventRecursion: false,
    matchPersonaDescription: false,
    matchCharacterDescription: false,
    matchCharacterPersonality: false,
    matchCharacterDepthPrompt: false,
    matchScenario: false,
    matchCreatorNotes: false,
    delayUntilRecursion: 0,
    probability: 100,
    useProbability: true,
    depth: 4,
    outletName: '',
    group: '',
    groupOverride: false,
    groupWeight: 100,
    scanDepth: null,
    caseSensitive: null,
    matchWholeWords: null,
    useGroupScoring: null,
    automationId: '',
    role: 0,
    sticky: null,
    cooldown: null,
    delay: null,
    triggers: [],
    displayIndex: uid,
  };
}

export const ENTRY_FIELD_NAMES: ReadonlyArray<keyof WorldbookEntryFields> = [
  'keys',
  'keys_secondary',
  'content',
  'comment',
  'selective',
  'selective_logic',
  'constant',
  'position',
  'order',
  'depth',
  'role',
  'disable',
  'scan_depth',
  'case_sensitive',
  'match_whole_words',
  'exclude_recursion',
  'prevent_recursion',
  'delay_until_recursion',
  'outlet_name',
];

export function searchText(
  entry: Pick<WorldbookEntryFields, 'keys' | 'keys_secondary' | 'comment' | 'content'>,
): string {
  return [...entry.keys, ...entry.keys_secondary, entry.comment, entry.content].join('\n').toLowerCase();
}

export function rowToNormalized(row: WorldbookEntryRow): NormalizedWorldbookEntry {
  const entry = { uid: row.uid, raw: row.raw } as NormalizedWorldbookEntry;
  for (const field of ENTRY_FIELD_NAMES) (entry as unknown as JsonObject)[field] = row[field];
  return entry;
}

/** The insertable row of a normalised entry. */
export function normalizedToRow(
  entry: NormalizedWorldbookEntry,
  ids: { id: string; worldbook_id: string; account_id: string; created_at: number; updated_at: number },
): WorldbookEntryRecord {
  return {
    ...ids,
    uid: entry.uid,
    keys: entry.keys,
    keys_secondary: entry.keys_secondary,
    content: entry.content,
    comment: entry.comment,
    selective: entry.selective,
    selective_logic: entry.selective_logic,
    constant: entry.constant,
    position: entry.position,
    order: entry.order,
    depth: entry.depth,
    role: entry.role,
    disable: entry.disable,
    scan_depth: entry.scan_depth,
    case_sensitive: entry.case_sensitive,
    match_whole_words: entry.match_whole_words,
    exclude_recursion: entry.exclude_recursion,
    prevent_recursion: entry.prevent_recursion,
    delay_until_recursion: entry.delay_until_recursion,
    outlet_name: entry.outlet_name,
    raw: entry.raw,
    search_text: searchText(entry),
  };
}

/** Applies API field changes to a stored row (in memory); `delay_until_recursion: 0` means null. */
export function applyEntryFields(row: WorldbookEntryRow, fields: Partial<WorldbookEntryFields>, now: number) {
  const next = { ...row } as unknown as JsonObject;
  for (const field of ENTRY_FIELD_NAMES) {
    const value = fields[field];
    if (value === undefined) continue;
    next[field] = field === 'delay_until_recursion' && value === 0 ? null : cloneJson(value);
  }
  next.updated_at = now;
  next.search_text = searchText(next as unknown as WorldbookEntryRow);
  return next as unknown as WorldbookEntryRow;
}

/**
 * Whether an incoming entry (of a PUT or a rollback) leaves a stored one as it is: the same fields and
 * raw entry, or a raw entry equal to what the detail or the export shows for the stored one (so reading
 * `data` and writing it back does not rewrite unchanged entries with the detail's filled-in fields).
 */
export function sameEntry(row: WorldbookEntryRow, entry: NormalizedWorldbookEntry): boolean {
  const stored = rowToNormalized(row);
  if (jsonEqual(stored, entry)) return true;
  if (!ENTRY_FIELD_NAMES.every((field) => jsonEqual(stored[field], entry[field]))) return false;
  return jsonEqual(entry.raw, detailStEntry(stored)) || jsonEqual(entry.raw, worldbookEntryToSt(stored));
}

/** The ST form of an entry in the detail's `data.entries`: raw fields plus every field spec 3 lists. */
export function detailStEntry(entry: NormalizedWorldbookEntry): JsonObject {
  return {
    ...worldbookEntryToSt(entry),
    uid: entry.uid,
    key: entry.keys,
    keysecondary: entry.keys_secondary,
    selective: entry.selective,
    selectiveLogic: entry.selective_logic,
    constant: entry.constant,
    content: entry.content,
    comment: entry.comment,
    position: entry.position,
    order: entry.order,
    depth: entry.depth,
    role: entry.role,
    disable: entry.disable,
    scanDepth: entry.scan_depth,
    caseSensitive: entry.case_sensitive,
    matchWholeWords: entry.match_whole_words,
  };
}

/** The detail's `data`: stored top-level fields, the five global fields (null when unset), name, entries. */
export function detailData(book: WorldbookRow, entries: WorldbookEntryRow[]): JsonObject {
  const globals: JsonObject = {};
  for (const field of WORLDBOOK_GLOBAL_FIELDS) globals[field] = book.extra[field] ?? null;
  return {
    ...cloneJson(book.extra),
    ...globals,
    name: book.name,
    entries: entries.map((row) => detailStEntry(rowToNormalized(row))),
  };
}

/** The exported ST file: stored top-level fields, `name`, entries keyed by uid (extensions nested). */
export function exportFile(name: string, extra: JsonObject, entries: NormalizedWorldbookEntry[]): JsonObject {
  return exportWorldbook({ name: null, entries, extra }, name);
}

/**
 * `exportFile` for entries fresh from the codec (nothing changed since parsing): each ST entry is its raw
 * entry with its uid, which is what `worldbookEntryToSt` gives for them, without re-normalising each one.
 */
export function exportParsedFile(
  name: string,
  extra: JsonObject,
  entries: NormalizedWorldbookEntry[],
): JsonObject {
  const byUid: JsonObject = {};
  for (const entry of entries) byUid[String(entry.uid)] = { ...entry.raw, uid: entry.uid };
  return { ...extra, entries: byUid, name };
}

// ---- payload validation (PUT) ----

const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/**
 * Parses the raw `data` of a PUT: the codec's rules and the import's bounds (at most
 * WORLDBOOK_IMPORT_MAX_ENTRIES entries, counted before parsing; uids up to WORLDBOOK_UID_MAX) — 400
 * `worldbook_validation_error` instead of `import_parse_error`, same details —, spec 3's ranges for the
 * entry fields, and the global fields' types.
 */
export function parseWorldbookPayload(data: unknown): { book: NormalizedWorldbook; extra: JsonObject } {
  let book: NormalizedWorldbook;
  try {
    checkWorldbookImportEntries(isPlainObject(data) ? data.entries : undefined, 'data.entries');
    book = parseWorldbook(data);
    checkWorldbookStoredUids(book.entries);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'import_parse_error')
      throw worldbookValidationError(error.message, error.details);
    throw error;
  }
  for (const entry of book.entries) {
    const where = `data.entries[uid ${entry.uid}]`;
    const bad = (field: string, what: string) =>
      worldbookValidationError(`${where}.${field} must be ${what}`, { field: `${where}.${field}` });
    if (!isInt(entry.position, 0, 7)) throw bad('position', 'an integer 0-7');
    if (!isInt(entry.selective_logic, 0, 3)) throw bad('selectiveLogic', 'an integer 0-3');
    if (!isInt(entry.role, 0, 2)) throw bad('role', 'an integer 0-2');
    if (!isInt(entry.order, -Number.MAX_SAFE_INTEGER)) throw bad('order', 'an integer');
    if (!isInt(entry.depth, 0)) throw bad('depth', 'a non-negative integer');
    if (entry.scan_depth !== null && !isInt(entry.scan_depth, 0))
      throw bad('scanDepth', 'a non-negative integer or null');
    if (entry.delay_until_recursion !== null && !isInt(entry.delay_until_recursion, 1))
      throw bad('delayUntilRecursion', 'a positive integer, a boolean or null');
  }
  const extra = cloneJson(book.extra);
  delete extra.name;
  for (const field of WORLDBOOK_GLOBAL_FIELDS) {
    const value = extra[field];
    if (value === null) {
      delete extra[field];
      continue;
    }
    if (value === undefined) continue;
    const ok =
      field === 'scanDepth' || field === 'maxRecursionSteps' ? isInt(value, 0) : typeof value === 'boolean';
    if (!ok)
      throw worldbookValidationError(
        `data.${field} must be ${field === 'scanDepth' || field === 'maxRecursionSteps' ? 'a non-negative integer' : 'a boolean'} or null`,
        { field: `data.${field}` },
      );
  }
  return { book, extra };
}

// ---- versions ----

/** A version's payload: a full exported file, or the entries changed since the previous version. */
export type WorldbookVersionPayload =
  | { format: 'worldbook_snapshot'; file: JsonObject }
  | {
      format: 'worldbook_delta';
      /** The snapshot this delta chain starts from. */
      snapshot_version_no: number;
      name: string;
      extra: JsonObject;
      /** ST entries written by this version (new or changed), each with its uid. */
      upserts: JsonObject[];
      deleted_uids: number[];
    };

/** The file a version holds, from its snapshot and the deltas up to it (rows oldest first). */
export function replayVersions(chain: Array<{ version_no: number; payload: unknown }>): JsonObject {
  let file: JsonObject | null = null;
  for (const row of chain) {
    const payload = row.payload as WorldbookVersionPayload;
    if (payload.format === 'worldbook_snapshot') {
      file = cloneJson(payload.file);
      continue;
    }
    if (!file) throw new Error(`worldbook version ${row.version_no} has no snapshot before it`);
    const entries = { ...(file.entries as JsonObject) };
    for (const uid of payload.deleted_uids) delete entries[String(uid)];
    for (const entry of payload.upserts) entries[String(entry.uid)] = cloneJson(entry);
    const sorted: JsonObject = {};
    for (const key of Object.keys(entries).sort((a, b) => Number(a) - Number(b))) sorted[key] = entries[key];
    file = { ...cloneJson(payload.extra), entries: sorted, name: payload.name };
  }
  if (!file) throw new Error('empty worldbook version chain');
  return file;
}
