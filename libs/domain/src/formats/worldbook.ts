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

function readField(value: unknown, kind: Kind, fallback: unknown, where: string): unknown {
  if (value === undefined || value === null) return fallback;
  const bad = (what: string) => importParseError(`${where} must be ${what}`, { field: where });
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw bad('a string');
      return value;
    case 'strings':
      if (typeof value === 'string')
        return value
          .split(',')
          .map((k) => k.trim())
          .filter((k) => k.length > 0);
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
  const entry: JsonObject = { uid };
  for (const [name, stName, kind, fallback] of FIELD_MAP) {
    entry[name] = readField(raw[stName], kind, cloneJson(fallback), `entries[${uid}].${stName}`);
  }
  entry.raw = cloneJson(raw);
  return entry as unknown as NormalizedWorldbookEntry;
}

/**
 * The ST form of an entry: its raw fields, with every normalised field that differs from what the raw
 * entry means written back in ST's name (so unchanged entries export exactly as imported).
 */
export function worldbookEntryToSt(entry: NormalizedWorldbookEntry): JsonObject {
  const out = cloneJson(entry.raw ?? {});
  const before = normalizeWorldbookEntry(out, entry.uid);
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
  const { entries, ...rest } = cloneJson(input);
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
    return normalizeWorldbookEntry(st, assigned);
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
    if (value === undefined) value = cloneJson(fallback);
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
  const entries = book.entries.map((entry, index) => {
    if (!isPlainObject(entry)) {
      throw importParseError(`character_book.entries[${index}] must be an object`, {
        field: `character_book.entries[${index}]`,
      });
    }
    return characterBookEntryToSt(entry, index);
  });
  const parsed = parseWorldbook({ entries });
  const name = typeof book.name === 'string' ? book.name : null;
  return {
    name,
    entries: parsed.entries,
    extra: { ...(name !== null ? { name } : {}), originalData: cloneJson(book) },
  };
}
