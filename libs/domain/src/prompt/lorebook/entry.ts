import type { NormalizedWorldbookEntry } from '../../formats/worldbook';
import { LOREBOOK_DEFAULT_DEPTH, LOREBOOK_DEFAULT_WEIGHT } from './settings';

/**
 * One lorebook entry read for activation: the normalised fields plus the ST fields the normalised entry
 * leaves in `raw` (probability, groups, timed effects, triggers, ignoreBudget, characterFilter, match*
 * flags; external-formats.md §c table). Missing or mistyped fields take ST's defaults, never throw.
 */

export type LorebookSourceKind = 'chat' | 'persona' | 'global' | 'character';

/** §d.8 extra scan inputs an entry can ask for (flag → text). */
export type LorebookScanSourceKind =
  | 'persona_description'
  | 'character_description'
  | 'character_personality'
  | 'character_depth_prompt'
  | 'scenario'
  | 'creator_notes';

/** In ST's order of §d.2 (persona, description, personality, depth prompt, scenario, creator notes). */
export const SCAN_SOURCE_FLAGS: ReadonlyArray<[LorebookScanSourceKind, string]> = [
  ['persona_description', 'matchPersonaDescription'],
  ['character_description', 'matchCharacterDescription'],
  ['character_personality', 'matchCharacterPersonality'],
  ['character_depth_prompt', 'matchCharacterDepthPrompt'],
  ['scenario', 'matchScenario'],
  ['creator_notes', 'matchCreatorNotes'],
];

/**
 * Book-level match defaults (spec 3 worldbook payload `scanDepth`, `caseSensitive`, `matchWholeWords`): used
 * for an entry whose own value is null, before the session settings (docs/decisions.md "Prompt engine:
 * lorebook"). ST world files have no such fields, so ST books behave exactly as in ST.
 */
export interface LorebookBookDefaults {
  scanDepth?: number | null;
  caseSensitive?: boolean | null;
  matchWholeWords?: boolean | null;
}

export interface CharacterFilter {
  names: string[];
  tags: string[];
  isExclude: boolean;
}

export interface LorebookEntryView {
  bookId: string;
  bookName: string;
  source: LorebookSourceKind;
  uid: number;
  comment: string;
  /** Content with leading decorator lines removed (§d.1). */
  content: string;
  decorators: string[];
  keys: string[];
  secondaryKeys: string[];
  selective: boolean;
  selectiveLogic: number;
  constant: boolean;
  disable: boolean;
  position: number;
  order: number;
  depth: number;
  role: number;
  scanDepth: number | null;
  caseSensitive: boolean | null;
  matchWholeWords: boolean | null;
  useGroupScoring: boolean | null;
  excludeRecursion: boolean;
  preventRecursion: boolean;
  /** 0 = not delayed. */
  delayUntilRecursion: number;
  outletName: string;
  probability: number;
  useProbability: boolean;
  /** Inclusion groups (the comma list split, §d.5). */
  groups: string[];
  /** The raw `group` string (ST compares it whole when a group already fired in an earlier pass). */
  groupRaw: string;
  groupOverride: boolean;
  groupWeight: number;
  ignoreBudget: boolean;
  sticky: number;
  cooldown: number;
  delay: number;
  triggers: string[];
  characterFilter: CharacterFilter | null;
  /** Bit i set = scan SCAN_SOURCE_FLAGS[i] too. */
  scanSourceMask: number;
  /** Stable hash of the entry, as ST's timed-effect records carry (an edited entry is a different one). */
  hash: string;
}

const KNOWN_DECORATORS = ['@@activate', '@@dont_activate'];

/** ST `parseDecorators`: leading `@@` lines; `@@@x` is the fallback used when the line before was unknown. */
export function parseDecorators(content: string): { decorators: string[]; content: string } {
  if (!content.startsWith('@@')) return { decorators: [], content };
  const isKnown = (line: string) => {
    const l = line.startsWith('@@@') ? line.substring(1) : line;
    return KNOWN_DECORATORS.some((d) => l.startsWith(d));
  };
  const lines = content.split('\n');
  const decorators: string[] = [];
  let newContent = content;
  let fallbacked = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('@@')) {
      if (line.startsWith('@@@') && !fallbacked) continue;
      if (isKnown(line)) {
        decorators.push(line.startsWith('@@@') ? line.substring(1) : line);
        fallbacked = false;
      } else {
        fallbacked = true;
      }
    } else {
      newContent = lines.slice(i).join('\n');
      break;
    }
  }
  return { decorators, content: newContent };
}

const num = (v: unknown, fallback: number): number =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;
const bool = (v: unknown, fallback: boolean): boolean => (typeof v === 'boolean' ? v : fallback);
const boolOrNull = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
/** Timed-effect counts: a positive number, else 0 (ST treats 0/null as "no effect"). */
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

function readCharacterFilter(v: unknown): CharacterFilter | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const names = strings(o.names);
  const tags = strings(o.tags);
  if (names.length === 0 && tags.length === 0) return null;
  return { names, tags, isExclude: o.isExclude === true };
}

/** FNV-1a 32-bit, hex. */
export function stringHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

export function readLorebookEntry(
  entry: NormalizedWorldbookEntry,
  book: { id: string; name: string; source: LorebookSourceKind; defaults?: LorebookBookDefaults | null },
): LorebookEntryView {
  const defaults = book.defaults && typeof book.defaults === 'object' ? book.defaults : {};
  const bookScanDepth =
    typeof defaults.scanDepth === 'number' && Number.isInteger(defaults.scanDepth) && defaults.scanDepth >= 0
      ? defaults.scanDepth
      : null;
  const raw = (entry.raw && typeof entry.raw === 'object' ? entry.raw : {}) as Record<string, unknown>;
  const { decorators, content } = parseDecorators(str(entry.content));
  const groupRaw = str(raw.group);
  let scanSourceMask = 0;
  SCAN_SOURCE_FLAGS.forEach(([, flag], i) => {
    if (raw[flag] === true) scanSourceMask |= 1 << i;
  });
  const delayUntilRecursion =
    typeof entry.delay_until_recursion === 'number' && entry.delay_until_recursion > 0
      ? entry.delay_until_recursion
      : 0;
  return {
    bookId: book.id,
    bookName: book.name,
    source: book.source,
    uid: entry.uid,
    comment: str(entry.comment),
    content,
    decorators,
    keys: strings(entry.keys),
    secondaryKeys: strings(entry.keys_secondary),
    selective: bool(entry.selective, true),
    selectiveLogic: num(entry.selective_logic, 0),
    constant: entry.constant === true,
    disable: entry.disable === true,
    position: num(entry.position, 0),
    order: num(entry.order, 100),
    depth: num(entry.depth, LOREBOOK_DEFAULT_DEPTH),
    role: num(entry.role, 0),
    scanDepth:
      typeof entry.scan_depth === 'number' && Number.isFinite(entry.scan_depth)
        ? entry.scan_depth
        : bookScanDepth,
    caseSensitive: boolOrNull(entry.case_sensitive) ?? boolOrNull(defaults.caseSensitive),
    matchWholeWords: boolOrNull(entry.match_whole_words) ?? boolOrNull(defaults.matchWholeWords),
    useGroupScoring: boolOrNull(raw.useGroupScoring),
    excludeRecursion: entry.exclude_recursion === true,
    preventRecursion: entry.prevent_recursion === true,
    delayUntilRecursion,
    outletName: str(entry.outlet_name),
    probability: num(raw.probability, 100),
    // ST's runtime rolls only when useProbability is set (`!entry.useProbability` skips the roll); card imports set it.
    useProbability: raw.useProbability === true,
    groups: groupRaw.split(/,\s*/).filter((g) => g.length > 0),
    groupRaw,
    groupOverride: raw.groupOverride === true,
    groupWeight: num(raw.groupWeight, LOREBOOK_DEFAULT_WEIGHT),
    ignoreBudget: raw.ignoreBudget === true,
    sticky: count(raw.sticky),
    cooldown: count(raw.cooldown),
    delay: count(raw.delay),
    triggers: strings(raw.triggers),
    characterFilter: readCharacterFilter(raw.characterFilter),
    scanSourceMask,
    hash: stringHash(
      JSON.stringify([book.id, entry.uid, entry.keys, entry.keys_secondary, entry.content, raw]),
    ),
  };
}
