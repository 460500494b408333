import type { NormalizedWorldbookEntry } from '../../formats/worldbook';
import {
  readLorebookEntry,
  type LorebookBookDefaults,
  type LorebookEntryView,
  type LorebookSourceKind,
} from './entry';
import { compileKey, type CompiledKey } from './matcher';

/**
 * A book read once for activation: entries as views (uid ascending, as ST reads a world file's object
 * keys) and a cache of compiled keys. `activateLorebooks` prepares raw books itself and remembers the result
 * by the identity of the `entries` array, so a caller that keeps its book objects pays this once; a caller
 * can also call `prepareLorebook` and pass the result.
 */

export interface PreparedLorebook {
  readonly prepared: true;
  readonly id: string;
  readonly name: string;
  readonly source: LorebookSourceKind;
  readonly defaults: LorebookBookDefaults | null;
  readonly entries: readonly LorebookEntryView[];
  /** Compiled keys by key text (after macro substitution and trim). */
  readonly keys: Map<string, CompiledKey>;
  /** Per entry (same index): its keys compiled once, or null when a key holds a macro (resolved per call). */
  readonly staticKeys: ReadonlyArray<{
    primary: Array<CompiledKey | null> | null;
    secondary: Array<CompiledKey | null> | null;
  }>;
}

const KEY_CACHE_LIMIT = 20_000;
const remembered = new WeakMap<object, PreparedLorebook>();

export interface LorebookBookShape {
  id: string;
  name: string;
  source: LorebookSourceKind;
  entries: readonly NormalizedWorldbookEntry[];
  defaults?: LorebookBookDefaults | null;
}

export function prepareLorebook(book: LorebookBookShape): PreparedLorebook {
  const entries = [...(Array.isArray(book.entries) ? book.entries : [])]
    .filter((e): e is NormalizedWorldbookEntry => !!e && typeof e === 'object' && Number.isFinite(e.uid))
    .sort((a, b) => a.uid - b.uid)
    .map((e) => readLorebookEntry(e, book));
  const keys = new Map<string, CompiledKey>();
  const compileStatic = (list: string[]): Array<CompiledKey | null> | null => {
    if (list.some(hasMacro)) return null;
    return list.map((raw) => {
      const text = raw.trim();
      if (!text) return null;
      let key = keys.get(text);
      if (!key) {
        key = compileKey(text);
        keys.set(text, key);
      }
      return key;
    });
  };
  const staticKeys = entries.map((entry) => ({
    primary: compileStatic(entry.keys),
    secondary: compileStatic(entry.secondaryKeys),
  }));
  const defaults = book.defaults ?? null;
  return {
    prepared: true,
    id: book.id,
    name: book.name,
    source: book.source,
    defaults,
    entries,
    keys,
    staticKeys,
  };
}

/** Prepared form of a book, reusing an earlier preparation of the same `entries` array. */
export function preparedFor(book: PreparedLorebook | LorebookBookShape): PreparedLorebook {
  if ('prepared' in book && book.prepared === true) return book;
  const raw = book as LorebookBookShape;
  const anchor = raw.entries as unknown as object;
  const hit = anchor && typeof anchor === 'object' ? remembered.get(anchor) : undefined;
  if (
    hit &&
    hit.id === raw.id &&
    hit.name === raw.name &&
    hit.source === raw.source &&
    JSON.stringify(hit.defaults) === JSON.stringify(raw.defaults ?? null)
  )
    return hit;
  const prepared = prepareLorebook(raw);
  if (anchor && typeof anchor === 'object') remembered.set(anchor, prepared);
  return prepared;
}

/** Text that the macro hook could change (`{{…}}`, or ST's legacy `<USER>`/`<BOT>`/`<CHAR>` tokens). */
export function hasMacro(text: string): boolean {
  return text.includes('{{') || text.includes('<');
}

/** The compiled key for a key's final text, compiled on first use. */
export function compiledKey(book: PreparedLorebook, text: string): CompiledKey {
  let key = book.keys.get(text);
  if (!key) {
    if (book.keys.size >= KEY_CACHE_LIMIT) book.keys.clear();
    key = compileKey(text);
    book.keys.set(text, key);
  }
  return key;
}
