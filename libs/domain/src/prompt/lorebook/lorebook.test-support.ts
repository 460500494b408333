import { normalizeWorldbookEntry, type NormalizedWorldbookEntry } from '../../formats/worldbook';
import type { TokenCounter } from '../shared/token-counter';
import { activateLorebooks } from './activate';
import type { LorebookSourceKind } from './entry';
import type { LorebookActivation, LorebookActivationInput, LorebookBookInput } from './types';

/** Test helpers: entries in ST's own field names, books, and a character-count token counter. */

export function stEntry(uid: number, fields: Record<string, unknown>): NormalizedWorldbookEntry {
  return normalizeWorldbookEntry({ uid, key: [], content: `content ${uid}`, ...fields } as never, uid);
}

export function book(
  id: string,
  entries: NormalizedWorldbookEntry[],
  source: LorebookSourceKind = 'character',
): LorebookBookInput {
  return { id, name: `${id}-name`, source, entries };
}

/** One token per character: budgets become exact arithmetic. */
export const charCounter: TokenCounter = { encoding: 'o200k_base', count: (text) => text.length };

export type RunInput = Partial<LorebookActivationInput> & { books: LorebookActivationInput['books'] };

/** Runs with neutral settings (names off, whole words off, recursion off) unless the test says otherwise. */
export function run(input: RunInput): LorebookActivation {
  return activateLorebooks({
    messages: [],
    maxPromptTokens: 100_000,
    seed: 'seed',
    tokenCounter: charCounter,
    ...input,
    settings: {
      includeNames: false,
      matchWholeWords: false,
      recursive: false,
      budgetPercent: 100,
      ...input.settings,
    },
  });
}

export const msgs = (...texts: string[]) => texts.map((text) => ({ text }));
export const uids = (r: LorebookActivation) => r.activated.map((a) => a.uid);
