import {
  cloneJson,
  expectObject,
  expectString,
  expectStringArray,
  importParseError,
  isPlainObject,
  JsonObject,
  parseJsonText,
} from './format.rules';
import { isPng, readPngCard } from './png-card';

/**
 * Character cards (external-formats.md §b; spec 3 "Exports"): legacy flat (V1), `chara_card_v2` and
 * `chara_card_v3` parse into one normalised shape that keeps every field it does not know (lossless), and
 * export back to a V2 or V3 envelope. Text is never touched: `{{macros}}` stay literal.
 */

export type CharacterCardSourceFormat = 'legacy' | 'chara_card_v2' | 'chara_card_v3';
export type CharacterCardExportFormat = 'v2' | 'v3';

export const CARD_STRING_FIELDS = [
  'name',
  'description',
  'personality',
  'scenario',
  'first_mes',
  'mes_example',
  'creator_notes',
  'system_prompt',
  'post_history_instructions',
  'creator',
  'character_version',
] as const;

/** V3 fields exported only when the stored card has them (spec 3 "Exports"). */
export const CARD_V3_OPTIONAL_FIELDS = [
  'assets',
  'nickname',
  'creator_notes_multilingual',
  'source',
  'creation_date',
  'modification_date',
] as const;

/** The card `data` object: every spec field with ST's defaults, plus any other field of the source. */
export interface CharacterCardData {
  name: string;
  description: string;
  personality: string;
  scenario: string;
  first_mes: string;
  mes_example: string;
  creator_notes: string;
  system_prompt: string;
  post_history_instructions: string;
  alternate_greetings: string[];
  tags: string[];
  creator: string;
  character_version: string;
  extensions: JsonObject;
  /** The embedded lorebook, kept exactly as imported (see worldbook.ts `characterBookToWorldbook`). */
  character_book?: JsonObject;
  group_only_greetings?: string[];
  [field: string]: unknown;
}

export interface NormalizedCharacterCard {
  source_format: CharacterCardSourceFormat;
  /** `spec_version` of the source envelope; null for legacy cards. */
  source_spec_version: string | null;
  data: CharacterCardData;
  /** Top-level fields other than spec, spec_version and data (ST's V1 duplicates, unknown fields). */
  envelope: JsonObject;
  /** Non-fatal observations, e.g. a V3 `spec_version` newer than 3.0. */
  warnings: string[];
}

/** Parses any supported card; anything else is a 400 `import_parse_error` naming what is wrong. */
export function parseCharacterCard(input: unknown): NormalizedCharacterCard {
  if (!isPlainObject(input)) throw importParseError('character card must be a JSON object');
  const card = cloneJson(input);
  const spec = card.spec;
  if (spec === 'chara_card_v2' || spec === 'chara_card_v3') return parseEnvelope(card, spec);
  if (spec !== undefined && spec !== null) {
    throw importParseError(`unsupported character card spec: ${JSON.stringify(spec)}`, { field: 'spec' });
  }
  if (typeof card.name !== 'string') {
    throw importParseError('not a character card: no spec and no string name', { field: 'name' });
  }
  return parseLegacy(card);
}

function parseEnvelope(card: JsonObject, spec: 'chara_card_v2' | 'chara_card_v3'): NormalizedCharacterCard {
  const { spec: _spec, spec_version, data, ...envelope } = card;
  if (!isPlainObject(data)) throw importParseError(`${spec} card must have a data object`, { field: 'data' });
  const warnings: string[] = [];
  const version = spec_version === undefined || spec_version === null ? null : String(spec_version);
  if (spec === 'chara_card_v3' && version !== null && Number.parseFloat(version) > 3) {
    warnings.push(`chara_card_v3 spec_version ${version} is newer than 3.0; imported as 3.0`);
  }
  return {
    source_format: spec,
    source_spec_version: version,
    data: normaliseData(data, 'data'),
    envelope,
    warnings,
  };
}

function parseLegacy(card: JsonObject): NormalizedCharacterCard {
  const tags = typeof card.tags === 'string' ? splitTags(card.tags) : expectStringArray(card.tags, 'tags');
  const extensions: JsonObject = {
    talkativeness: card.talkativeness ?? 0.5,
    fav: card.fav === true || card.fav === 'true',
  };
  const data = normaliseData(
    {
      name: card.name,
      description: card.description,
      personality: card.personality,
      scenario: card.scenario,
      first_mes: card.first_mes,
      mes_example: card.mes_example,
      creator_notes: card.creatorcomment,
      tags,
      extensions,
    },
    '',
  );
  return { source_format: 'legacy', source_spec_version: null, data, envelope: card, warnings: [] };
}

function splitTags(text: string): string[] {
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag.length > 0);
}

function normaliseData(data: JsonObject, prefix: string): CharacterCardData {
  const at = (field: string) => (prefix ? `${prefix}.${field}` : field);
  const out: JsonObject = { ...data };
  for (const field of CARD_STRING_FIELDS) out[field] = expectString(data[field], at(field)) ?? '';
  out.alternate_greetings = expectStringArray(data.alternate_greetings, at('alternate_greetings')) ?? [];
  out.tags = expectStringArray(data.tags, at('tags')) ?? [];
  out.extensions = expectObject(data.extensions, at('extensions')) ?? {};
  if (data.group_only_greetings !== undefined) {
    out.group_only_greetings = expectStringArray(data.group_only_greetings, at('group_only_greetings')) ?? [];
  }
  if (data.character_book !== undefined && data.character_book !== null) {
    const book = expectObject(data.character_book, at('character_book'));
    if (book && !Array.isArray(book.entries)) {
      throw importParseError(`${at('character_book.entries')} must be an array`, {
        field: at('character_book.entries'),
      });
    }
  }
  expectString(data.nickname, at('nickname'));
  if (data.assets !== undefined && data.assets !== null && !Array.isArray(data.assets)) {
    throw importParseError(`${at('assets')} must be an array`, { field: at('assets') });
  }
  return out as CharacterCardData;
}

/** ST's V1 top-level duplicates refreshed from `data` on export (data wins, as ST reads). */
const V1_DUPLICATES: ReadonlyArray<[string, keyof CharacterCardData]> = [
  ['name', 'name'],
  ['description', 'description'],
  ['personality', 'personality'],
  ['scenario', 'scenario'],
  ['first_mes', 'first_mes'],
  ['mes_example', 'mes_example'],
  ['creatorcomment', 'creator_notes'],
];

/**
 * Exports a card envelope. Every stored field of `data` and of the envelope comes back (lossless); V1
 * duplicates that the source had at top level are refreshed from `data`. V3 gets `group_only_greetings`
 * (required by the V3 spec, default `[]`); V3 optional fields appear only when stored.
 */
export function exportCharacterCard(
  card: NormalizedCharacterCard,
  format: CharacterCardExportFormat,
): JsonObject {
  const data = cloneJson(card.data) as CharacterCardData;
  const envelope = cloneJson(card.envelope);
  for (const [top, field] of V1_DUPLICATES) {
    if (top in envelope) envelope[top] = data[field];
  }
  if (format === 'v3') {
    data.group_only_greetings = data.group_only_greetings ?? [];
    return { ...envelope, spec: 'chara_card_v3', spec_version: '3.0', data };
  }
  return { ...envelope, spec: 'chara_card_v2', spec_version: '2.0', data };
}

/** Reads a card file's bytes: a PNG (its `ccv3` or `chara` chunk) or UTF-8 JSON text. */
export function readCharacterCardFile(bytes: Uint8Array): NormalizedCharacterCard {
  if (isPng(bytes)) return parseCharacterCard(readPngCard(bytes).card);
  return parseCharacterCard(parseJsonText(Buffer.from(bytes).toString('utf8'), 'character card file'));
}
