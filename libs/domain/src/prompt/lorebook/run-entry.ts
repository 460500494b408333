import type { LorebookEntryView, LorebookSourceKind } from './entry';
import type { CompiledKey, Haystack, KeyMatchOptions } from './matcher';
import { preparedFor, type PreparedLorebook } from './prepare';
import type { LorebookSettings } from './settings';
import type {
  LorebookActivationInput,
  LorebookActivationMode,
  LorebookFirstMatch,
  LorebookWarning,
} from './types';

/** One entry during one activation call (per-call state over the prepared, shared entry view). */
export interface RunEntry {
  view: LorebookEntryView;
  book: PreparedLorebook;
  /** Index of the entry in its prepared book. */
  slot: number;
  /** Position in the sorted order (§d.1): the priority everywhere. */
  index: number;
  /** Content, with macros substituted once the entry went through the budget step (§d.5, §d.8). */
  content: string;
  primary?: Array<CompiledKey | null>;
  secondary?: Array<CompiledKey | null>;
  /** Case sensitivity and whole words (entry value over global), resolved once per call. */
  options?: KeyMatchOptions;
  /** The last scan text on which no primary key matched (its extensions only need their new part scanned). */
  missedOn?: Haystack;
  mode?: LorebookActivationMode;
  firstMatch?: LorebookFirstMatch | null;
}

export const SOURCE_ORDER: LorebookSourceKind[] = ['chat', 'persona', 'global', 'character'];

export const byOrderDesc = (a: RunEntry, b: RunEntry) => b.view.order - a.view.order;

/** §d.1: sources in order chat, persona, global, character; within each, `order` descending (stable). */
export function sortedEntries(
  input: LorebookActivationInput,
  settings: LorebookSettings,
  warnings: LorebookWarning[],
): RunEntry[] {
  const seen = new Set<string>();
  const bySource = new Map<LorebookSourceKind, PreparedLorebook[]>();
  const books = (Array.isArray(input.books) ? input.books : []).filter(
    (b) => b && typeof b === 'object' && SOURCE_ORDER.includes(b.source),
  );
  for (const source of SOURCE_ORDER) {
    for (const raw of books.filter((b) => b.source === source)) {
      if (seen.has(raw.id)) {
        warnings.push({
          code: 'duplicate_book_skipped',
          message: `book ${raw.name} is already included through an earlier source and is skipped as ${source} lore`,
          bookId: raw.id,
        });
        continue;
      }
      seen.add(raw.id);
      const list = bySource.get(source) ?? [];
      list.push(preparedFor(raw));
      bySource.set(source, list);
    }
  }
  // Each book's entries come in its remembered `order`-descending (stable) order, so the stable sorts below
  // find runs already in place; the result is the same as sorting the books' entries in uid order.
  const entriesOf = (source: LorebookSourceKind): RunEntry[] =>
    (bySource.get(source) ?? []).flatMap((book) =>
      orderDescSlots(book).map((slot) => {
        const view = book.entries[slot]!;
        return { view, book, slot, index: 0, content: view.content };
      }),
    );
  const sort = (list: RunEntry[]) => list.sort(byOrderDesc);
  const global = entriesOf('global');
  const character = entriesOf('character');
  let rest: RunEntry[];
  if (settings.characterStrategy === 'evenly') rest = sort([...global, ...character]);
  else if (settings.characterStrategy === 'global_first') rest = [...sort(global), ...sort(character)];
  else rest = [...sort(character), ...sort(global)];
  const all = [...sort(entriesOf('chat')), ...sort(entriesOf('persona')), ...rest];
  all.forEach((e, i) => (e.index = i));
  return all;
}

const sortedSlots = new WeakMap<PreparedLorebook, number[]>();

/** The book's entry slots by `order` descending, ties in slot (uid) order; computed once per prepared book. */
function orderDescSlots(book: PreparedLorebook): number[] {
  let slots = sortedSlots.get(book);
  if (!slots) {
    slots = book.entries.map((_, i) => i);
    slots.sort((a, b) => book.entries[b]!.order - book.entries[a]!.order || a - b);
    sortedSlots.set(book, slots);
  }
  return slots;
}
