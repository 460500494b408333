import { cloneJson, importParseError, isPlainObject, jsonEqual, JsonObject } from './format.rules';

/**
 * World info files (external-formats.md §c; spec 3 "Worldbook entry (normalised)"). ST keeps entries in an
 * object keyed by uid with camelCase fields; the normalised entry uses spec 3's snake_case names and
 * defaults and keeps the whole raw ST entry, so export is field-equivalent to the import.
 */

export const WORLDBOOK_POSITIONS = {
  before: 0,
  after: 1,
  an_top: 2,
  an_bottom: 3,
  at_depth: 4,
  em_top: 5,
  em_bottom: 6,
  outlet: 7,
} as const;

export interface NormalizedWorldbookEntry {
  uid: number;
  keys: string[];
  keys_secondary: string[];
  content: string;
  comment: string;
  selective: boolean;
  selective_logic: number;
  constant: boolean;
  position: number;
  order: number;
  depth: number;
  role: number;
  disable: boolean;
  scan_depth: number | null;
  case_sensitive: boolean | null;
  match_whole_words: boolean | null;
  exclude_recursion: boolean;
  prevent_recursion: boolean;
  delay_until_recursion: number | null;
  outlet_name: string;
  /** The ST entry exactly as imported (every field, including ones Hearth does not model). */
  raw: JsonObject;
}

/**
 * The most entries an imported worldbook may have (an ST world file, or a card's `character_book`); more
 * is 400 `import_parse_error` before anything is copied. Not in ST: a 10 MiB body holds 3,500,000 empty
 * entries, and each costs a few µs to normalise and more to store (100,000 took 3.8 s before the codec
 * stopped copying each entry twice, and ~1 s after; a card's entries cost about twice that).
 */
export const WORLDBOOK_IMPORT_MAX_ENTRIES = 20_000;

/**
 * 400 `import_parse_error` when `entries` (an array, or an object keyed by uid) holds more than
 * WORLDBOOK_IMPORT_MAX_ENTRIES entries; counts without copying (stops at the first one past the limit).
 */
export function checkWorldbookImportEntries(entries: unknown, field = 'entries'): void {
  let count = 0;
  if (Array.isArray(entries)) count = entries.length;
  else if (isPlainObject(entries)) {
    for (const key in entries) {
      if (Object.prototype.hasOwnProperty.call(entries, key) && ++count > WORLDBOOK_IMPORT_MAX_ENTRIES) break;
    }
  }
  if (count > WORLDBOOK_IMPORT_MAX_ENTRIES) {
    throw importParseError(`${field} has more than ${WORLDBOOK_IMPORT_MAX_ENTRIES} entries`, {
      field,
      max_entries: WORLDBOOK_IMPORT_MAX_ENTRIES,
    });
  }
}

/** Stored entry uids are Postgres `integer`s (a card's `character_book` ids are not stored as rows). */
export const WORLDBOOK_UID_MAX = 2_147_483_647;

/**
 * 400 `import_parse_error` for an entry whose uid a worldbook cannot store (above WORLDBOOK_UID_MAX; the
 * database would refuse the row).
 */
export function checkWorldbookStoredUids(entries: readonly NormalizedWorldbookEntry[]): void {
  for (const entry of entries) {
    if (entry.uid > WORLDBOOK_UID_MAX) {
      throw importParseError(`entries uid ${entry.uid} is above ${WORLDBOOK_UID_MAX}`, {
        field: `entries[${entry.uid}].uid`,
        max_uid: WORLDBOOK_UID_MAX,
      });
    }
  }
}

export type WorldbookEntryFields = Omit<NormalizedWorldbookEntry, 'uid' | 'raw'>;

export interface NormalizedWorldbook {
  /** The file's own `name`, if it has one. */
  name: string | null;
  entries: NormalizedWorldbookEntry[];
  /** Top-level fields other than `entries` (name, extensions, originalData, unknown ones). */
  extra: JsonObject;
}

type Kind = 'string' | 'strings' | 'boolean' | 'boolean?' | 'number' | 'number?' | 'delay';
/** normalised name → [ST name, kind, default]. */
const FIELD_MAP: ReadonlyArray<[keyof WorldbookEntryFields, string, Kind, unknown]> = [
  ['keys', 'key', 'strings', []],
  ['keys_secondary', 'keysecondary', 'strings', []],
  ['content', 'content', 'string', ''],
  ['comment', 'comment', 'string', ''],
  ['selective', 'selective', 'boolean', true],
  ['selective_logic', 'selectiveLogic', 'number', 0],
  ['constant', 'constant', 'boolean', false],
  ['position', 'position', 'number', 0],
  ['order', 'order', 'number', 100],
  ['depth', 'depth', 'number', 4],
  ['role', 'role', 'number', 0],
  ['disable', 'disable', 'boolean', false],
  ['scan_depth', 'scanDepth', 'number?', null],
  ['case_sensitive', 'caseSensitive', 'boolean?', null],
  ['match_whole_words', 'matchWholeWords', 'boolean?', null],
  ['exclude_recursion', 'excludeRecursion', 'boolean', false],
  ['prevent_recursion', 'preventRecursion', 'boolean', false],
  ['delay_until_recursion', 'delayUntilRecursion', 'delay', null],
  ['outlet_name', 'outletName', 'string', ''],
];

/** One item of a comma list: from its first to its last character that is neither comma nor whitespace. */
const COMMA_LIST_ITEM = /[^,\s](?:[^,]*[^,\s])?/g;

/** A fresh copy of a field default (`[]` is the only non-primitive one). */
function freshDefault(value: unknown): unknown {
  return Array.isArray(value) ? [] : value;
}

/** A field of entry `uid` (`stName`); the error's field path is built only when thrown. */
function readField(value: unknown, kind: Kind, fallback: unknown, uid: number, stName: string): unknown {
  if (value === undefined || value === null) return fallback;
  const bad = (what: string) => {
    const where = `entries[${uid}].${stName}`;
    return importParseError(`${where} must be ${what}`, { field: where });
  };
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw bad('a string');
      return value;
    case 'strings':
      // ST's comma list: the trimmed non-empty parts, matched at once (split, trim and filter built a
      // string per comma: 9,000,000 commas took 1.7 s).
      if (typeof value === 'string') return value.match(COMMA_LIST_ITEM) ?? [];
      if (!Array.isArray(value) || value.some((k) => typeof k !== 'string')) throw bad('an array of strings');
      return [...value];
    case 'boolean':
    case 'boolean?':
      if (typeof value !== 'boolean') throw bad('a boolean');
      return value;
    case 'number':
    case 'number?':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad('a number');
      return value;
    case 'delay':
      // Old files store a boolean: true = level 1; false and 0 mean "not delayed" (spec: null).
      if (typeof value === 'boolean') return value ? 1 : null;
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad('an integer or boolean');
      return value === 0 ? null : value;
  }
}

/** Normalises one ST world entry (camelCase fields) under the given uid; the raw entry is kept whole. */
export function normalizeWorldbookEntry(raw: JsonObject, uid: number): NormalizedWorldbookEntry {
  return normalizeOwnedEntry(cloneJson(raw), uid);
}

/**
 * `normalizeWorldbookEntry` of an entry the caller owns (a private copy), kept as `raw` without another
 * copy. Copies cost most of an import's time (100,000 empty entries took 3.8 s with a copy of every
 * default and of every entry twice).
 */
function normalizeOwnedEntry(raw: JsonObject, uid: number): NormalizedWorldbookEntry {
  const entry: JsonObject = { uid };
  for (const [name, stName, kind, fallback] of FIELD_MAP) {
    entry[name] = readField(raw[stName], kind, freshDefault(fallback), uid, stName);
  }
  entry.raw = raw;
  return entry as unknown as NormalizedWorldbookEntry;
}

/**
 * The ST form of an entry: its raw fields, with every normalised field that differs from what the raw
 * entry means written back in ST's name (so unchanged entries export exactly as imported).
 */
export function worldbookEntryToSt(entry: NormalizedWorldbookEntry): JsonObject {
  const out = cloneJson(entry.raw ?? {});
  // `before.raw` is `out` itself; only its normalised fields are read.
  const before = normalizeOwnedEntry(out, entry.uid);
  for (const [name, stName, kind] of FIELD_MAP) {
    const value = entry[name];
    if (jsonEqual(value, before[name])) continue;
    out[stName] = kind === 'delay' && value === null ? 0 : cloneJson(value);
  }
  out.uid = entry.uid;
  return out;
}

/** Parses an ST world file: `entries` as an object keyed by uid, an array, or card-embedded entries. */
export function parseWorldbook(input: unknown): NormalizedWorldbook {
  if (!isPlainObject(input)) throw importParseError('worldbook must be a JSON object');
  return parseOwnedWorldbook(cloneJson(input));
}

/** `parseWorldbook` of a file the caller owns (a private copy: its entries become the `raw` entries). */
function parseOwnedWorldbook(input: JsonObject): NormalizedWorldbook {
  const { entries, ...rest } = input;
  if (rest.name !== undefined && rest.name !== null && typeof rest.name !== 'string') {
    throw importParseError('worldbook name must be a string', { field: 'name' });
  }
  let items: Array<[string | null, unknown]>;
  if (Array.isArray(entries)) items = entries.map((e) => [null, e]);
  else if (isPlainObject(entries)) items = Object.entries(entries);
  else
    throw importParseError('worldbook entries must be an object keyed by uid or an array', {
      field: 'entries',
    });

  const used = new Set<number>();
  const pending: Array<[number | null, JsonObject]> = items.map(([key, value], index) => {
    const where = key === null ? `entries[${index}]` : `entries.${key}`;
    if (!isPlainObject(value)) throw importParseError(`${where} must be an object`, { field: where });
    const st = isCardEntry(value) ? characterBookEntryToSt(value, index) : value;
    const uid = pickUid(st.uid, key, where);
    if (uid !== null) {
      if (used.has(uid)) throw importParseError(`duplicate worldbook entry uid ${uid}`, { field: where });
      used.add(uid);
    }
    return [uid, st];
  });
  let next = 0;
  const normalized = pending.map(([uid, st]) => {
    let assigned = uid;
    if (assigned === null) {
      while (used.has(next)) next++;
      assigned = next;
      used.add(next);
    }
    // `st` is part of this call's copy of the input (or built from it): no other copy is needed.
    return normalizeOwnedEntry(st, assigned);
  });
  return { name: typeof rest.name === 'string' ? rest.name : null, entries: normalized, extra: rest };
}

function pickUid(uid: unknown, key: string | null, where: string): number | null {
  if (uid !== undefined && uid !== null) {
    if (typeof uid === 'number' && Number.isInteger(uid) && uid >= 0) return uid;
    if (typeof uid === 'string' && /^\d+$/.test(uid)) return Number(uid);
    throw importParseError(`${where}.uid must be a non-negative integer`, { field: `${where}.uid` });
  }
  return key !== null && /^\d+$/.test(key) ? Number(key) : null;
}

function isCardEntry(value: JsonObject): boolean {
  return !('key' in value) && ('keys' in value || 'insertion_order' in value || 'enabled' in value);
}

/**
 * Exports the ST file shape: top-level fields as imported, `entries` keyed by uid, each entry with its
 * `extensions` nested as stored. `name` overrides the file's own name when given.
 */
export function exportWorldbook(book: NormalizedWorldbook, name?: string): JsonObject {
  const entries: JsonObject = {};
  for (const entry of book.entries) entries[String(entry.uid)] = worldbookEntryToSt(entry);
  const out: JsonObject = { ...cloneJson(book.extra), entries };
  if (name !== undefined) out.name = name;
  return out;
}

/** card `extensions` name → ST world entry name, and the default ST uses when it is missing. */
const CARD_EXTENSION_MAP: ReadonlyArray<[string, string, unknown]> = [
  ['exclude_recursion', 'excludeRecursion', false],
  ['prevent_recursion', 'preventRecursion', false],
  ['delay_until_recursion', 'delayUntilRecursion', false],
  ['display_index', 'displayIndex', undefined],
  ['probability', 'probability', 100],
  ['useProbability', 'useProbability', true],
  ['depth', 'depth', 4],
  ['selectiveLogic', 'selectiveLogic', 0],
  ['outlet_name', 'outletName', ''],
  ['group', 'group', ''],
  ['group_override', 'groupOverride', false],
  ['group_weight', 'groupWeight', 100],
  ['scan_depth', 'scanDepth', null],
  ['case_sensitive', 'caseSensitive', null],
  ['match_whole_words', 'matchWholeWords', null],
  ['use_group_scoring', 'useGroupScoring', null],
  ['automation_id', 'automationId', ''],
  ['role', 'role', 0],
  ['vectorized', 'vectorized', false],
  ['sticky', 'sticky', null],
  ['cooldown', 'cooldown', null],
  ['delay', 'delay', null],
  ['match_persona_description', 'matchPersonaDescription', false],
  ['match_character_description', 'matchCharacterDescription', false],
  ['match_character_personality', 'matchCharacterPersonality', false],
  ['match_character_depth_prompt', 'matchCharacterDepthPrompt', false],
  ['match_scenario', 'matchScenario', false],
  ['match_creator_notes', 'matchCreatorNotes', false],
  ['triggers', 'triggers', []],
  ['ignore_budget', 'ignoreBudget', false],
];

/** Converts one `character_book` entry to an ST world entry, as ST's importer does (§b table). */
export function characterBookEntryToSt(entry: JsonObject, index: number): JsonObject {
  const where = `character_book.entries[${index}]`;
  const ext = entry.extensions ?? {};
  if (!isPlainObject(ext))
    throw importParseError(`${where}.extensions must be an object`, { field: `${where}.extensions` });
  const uid = entry.id ?? index;
  const position =
    ext.position !== undefined && ext.position !== null
      ? ext.position
      : entry.position === 'before_char'
        ? 0
        : 1;
  const st: JsonObject = {
    uid,
    key: entry.keys ?? [],
    keysecondary: entry.secondary_keys ?? [],
    comment: entry.comment ?? '',
    content: entry.content ?? '',
    constant: entry.constant ?? false,
    selective: entry.selective ?? true,
    order: entry.insertion_order ?? 100,
    position,
    disable: entry.enabled === undefined || entry.enabled === null ? false : !entry.enabled,
    addMemo: Boolean(entry.comment),
  };
  for (const [cardName, stName, fallback] of CARD_EXTENSION_MAP) {
    let value = ext[cardName];
    if ((value === undefined || value === null) && cardName === 'case_sensitive')
      value = entry.case_sensitive;
    if (value === undefined) value = freshDefault(fallback);
    if (value !== undefined) st[stName] = value;
  }
  st.extensions = cloneJson(ext);
  return st;
}

/**
 * A card's embedded `character_book` as a normalised worldbook. The book itself is kept as `originalData`
 * (what ST stores) so it can be re-embedded unchanged.
 */
export function characterBookToWorldbook(book: unknown): NormalizedWorldbook {
  if (!isPlainObject(book))
    throw importParseError('character_book must be an object', { field: 'character_book' });
  if (!Array.isArray(book.entries)) {
    throw importParseError('character_book.entries must be an array', { field: 'character_book.entries' });
  }
  // One copy to build the ST entries from (they keep parts of it as `raw`), one kept as `originalData`.
  const copy = cloneJson(book.entries);
  const entries = copy.map((entry, index) => {
    if (!isPlainObject(entry)) {
      throw importParseError(`character_book.entries[${index}] must be an object`, {
        field: `character_book.entries[${index}]`,
      });
    }
    return characterBookEntryToSt(entry, index);
  });
  const parsed = parseOwnedWorldbook({ entries });
  const name = typeof book.name === 'string' ? book.name : null;
  return {
    name,
    entries: parsed.entries,
    extra: { ...(name !== null ? { name } : {}), originalData: cloneJson(book) },
  };
}
