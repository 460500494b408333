import type { ActivatedLorebookEntry, LorebookRole, LorebookWarning } from './types';

/**
 * Placing activated entries (external-formats.md §d.7; §j "always sorted by order"): entries are sorted by
 * `order` descending (stable over activation order) and each is put at the front of its list, so every list
 * ends up in ascending `order` with ties in reverse activation order. The content goes through `transform`
 * first (the caller's WORLD_INFO regex scripts, §d.7); an entry whose content is then empty is skipped.
 * Outlets are the exception: ST `checkWorldInfo` pushes their entries, so an outlet lists them in
 * descending `order`.
 */

export interface PlacedLorebookEntry {
  entry: ActivatedLorebookEntry;
  /** The content after `transform`. */
  content: string;
}

export interface LorebookDepthGroup {
  depth: number;
  role: LorebookRole;
  entries: PlacedLorebookEntry[];
  /** Entries joined by `\n`. */
  content: string;
}

export interface LorebookOutlet {
  name: string;
  entries: PlacedLorebookEntry[];
  content: string;
}

export interface LorebookPlacement {
  /** Position 0 (`worldInfoBefore`), joined by `\n`. */
  before: { entries: PlacedLorebookEntry[]; content: string };
  /** Position 1 (`worldInfoAfter`). */
  after: { entries: PlacedLorebookEntry[]; content: string };
  /** Position 2: put before the author's note text. */
  authorsNoteTop: { entries: PlacedLorebookEntry[]; content: string };
  /** Position 3: put after the author's note text. */
  authorsNoteBottom: { entries: PlacedLorebookEntry[]; content: string };
  /** Position 4: one extension prompt per (depth, role), groups in order of their highest-order entry. */
  atDepth: LorebookDepthGroup[];
  /** Positions 5/6 in ST's single `EMEntries` list (before / after the example dialogues). */
  examples: Array<PlacedLorebookEntry & { position: 'before' | 'after' }>;
  /** Position 7, grouped by outlet name; each outlet in descending order (ST pushes, not unshifts). */
  outlets: LorebookOutlet[];
}

export function lorebookRole(role: number): LorebookRole {
  return role === 1 ? 'user' : role === 2 ? 'assistant' : 'system';
}

const joined = (entries: PlacedLorebookEntry[]) => ({
  entries,
  content: entries.map((e) => e.content).join('\n'),
});

export function placeLorebookEntries(
  activated: readonly ActivatedLorebookEntry[],
  transform: (content: string, entry: ActivatedLorebookEntry) => string = (c) => c,
  warnings: LorebookWarning[] = [],
): LorebookPlacement {
  const before: PlacedLorebookEntry[] = [];
  const after: PlacedLorebookEntry[] = [];
  const anTop: PlacedLorebookEntry[] = [];
  const anBottom: PlacedLorebookEntry[] = [];
  const depthGroups: Array<{ depth: number; role: LorebookRole; entries: PlacedLorebookEntry[] }> = [];
  const depthGroupOf = new Map<string, (typeof depthGroups)[number]>();
  const examples: Array<PlacedLorebookEntry & { position: 'before' | 'after' }> = [];
  const outlets = new Map<string, PlacedLorebookEntry[]>();

  const sorted = activated
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => b.entry.order - a.entry.order || a.index - b.index);
  // ST unshifts into every list but the outlets: the lists are built by push and reversed at the end (unshift
  // per entry is linear, 20,000 entries took 1.3 s).
  for (const { entry } of sorted) {
    const content = transform(entry.content, entry);
    if (!content) continue;
    const placed: PlacedLorebookEntry = { entry, content };
    switch (entry.position) {
      case 0:
        before.push(placed);
        break;
      case 1:
        after.push(placed);
        break;
      case 2:
        anTop.push(placed);
        break;
      case 3:
        anBottom.push(placed);
        break;
      case 4: {
        const key = `${entry.depth}|${entry.role}`;
        const group = depthGroupOf.get(key);
        if (group) group.entries.push(placed);
        else {
          const created = { depth: entry.depth, role: entry.role, entries: [placed] };
          depthGroups.push(created);
          depthGroupOf.set(key, created);
        }
        break;
      }
      case 5:
        examples.push({ ...placed, position: 'before' });
        break;
      case 6:
        examples.push({ ...placed, position: 'after' });
        break;
      case 7: {
        if (!entry.outletName) {
          warnings.push({
            code: 'outlet_without_name',
            message: `entry ${entry.uid} of ${entry.bookName} is an outlet entry without an outlet name and is not placed`,
            bookId: entry.bookId,
            uid: entry.uid,
          });
          break;
        }
        // ST pushes outlet entries (every other list is unshifted): an outlet reads highest order first.
        const list = outlets.get(entry.outletName) ?? [];
        list.push(placed);
        outlets.set(entry.outletName, list);
        break;
      }
      default:
        warnings.push({
          code: 'unknown_position',
          message: `entry ${entry.uid} of ${entry.bookName} has unknown position ${entry.position} and is not placed`,
          bookId: entry.bookId,
          uid: entry.uid,
        });
    }
  }
  for (const list of [before, after, anTop, anBottom, examples, ...depthGroups.map((g) => g.entries)])
    list.reverse();
  return {
    before: joined(before),
    after: joined(after),
    authorsNoteTop: joined(anTop),
    authorsNoteBottom: joined(anBottom),
    atDepth: depthGroups.map((g) => ({ ...g, content: g.entries.map((e) => e.content).join('\n') })),
    examples,
    outlets: [...outlets.entries()].map(([name, entries]) => ({ name, ...joined(entries) })),
  };
}
