import { MAX_INJECTION_DEPTH } from '../engine/authors-note';
import type { PromptRole } from './preset-prompts';

/**
 * In-chat (@depth) injections (external-formats.md §e.4; ST `populationInjectionPrompts`): absolute preset
 * prompts and extension prompts (lorebook entries at depth, author's note, the character's depth prompt,
 * the persona at depth, client injections) are inserted into the history counted from its end.
 */
export interface DepthInjection {
  content: string;
  depth: number;
  role: PromptRole;
  /** `injection_order` bucket; extension prompts are all in bucket 100. */
  order: number;
  /** `preset` for absolute preset prompts, `extension` for everything else. */
  kind: 'preset' | 'extension';
  /** Extension prompts are joined in the order of their keys (ST sorts `extension_prompts` keys). */
  key: string;
  /** Who asked for it, for the trace. */
  source_id: string;
  /**
   * Set on an extension prompt whose text still takes ST `getExtensionPrompt`'s macro pass (the author's
   * note, the character's note, the persona, lorebook entries at depth); the value labels the pass in the
   * macro trace. Without it the text is placed as given.
   */
  expand_as?: string;
}

export interface HistoryItem<T> {
  item: T;
  injected: false;
}

export interface InjectedItem {
  role: PromptRole;
  content: string;
  injected: true;
  source_ids: string[];
}

const ROLE_PRIORITY: PromptRole[] = ['system', 'user', 'assistant'];

/**
 * Returns the history (oldest first) with the injection messages in place. At each depth, buckets are
 * taken from the highest order to the lowest, roles system → user → assistant, and spliced in newest-first
 * order; once the list is turned back, smaller orders come first and, inside a bucket, assistant, user,
 * then system (closest to the end). Absolute preset prompts come before extension prompts of the same
 * bucket and role, joined with `\n`; empty texts are skipped. ST `getExtensionPromptMaxDepth` returns
 * `MAX_INJECTION_DEPTH` and `populationInjectionPrompts` walks depths 0..it, so a deeper one is never placed.
 *
 * Extension prompts of one bucket and role are what ST `getExtensionPrompt(IN_CHAT, depth, '\n', role,
 * false)` returns: keys sorted, each value trimmed, joined with `\n`, one macro pass (`expand`, over the
 * parts marked `expand_as`, in that order), and the joint of preset and extension text trimmed again.
 */
export function insertDepthInjections<T>(
  history: T[],
  injections: DepthInjection[],
  expand: (text: string, label: string) => string = (text) => text,
): Array<HistoryItem<T> | InjectedItem> {
  const newestFirst: Array<HistoryItem<T> | InjectedItem> = history
    .map((item) => ({ item, injected: false as const }))
    .reverse();
  const usable = injections.filter(
    (i) =>
      i.content.length > 0 && Number.isInteger(i.depth) && i.depth >= 0 && i.depth <= MAX_INJECTION_DEPTH,
  );
  if (usable.length === 0) return newestFirst.reverse();
  // Only depths that hold something can insert a message (ST walks every depth up to the maximum).
  const depths = [...new Set(usable.map((i) => i.depth))].sort((a, b) => a - b);
  let inserted = 0;
  for (const depth of depths) {
    const atDepth = usable.filter((i) => i.depth === depth);
    const orders = [...new Set([100, ...atDepth.map((i) => i.order)])].sort((a, b) => b - a);
    const messages: InjectedItem[] = [];
    for (const order of orders) {
      for (const role of ROLE_PRIORITY) {
        const bucket = atDepth.filter((i) => i.order === order && i.role === role);
        const presetParts = bucket.filter((i) => i.kind === 'preset');
        const extensionParts = bucket
          .filter((i) => i.kind === 'extension')
          .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        const presetText = presetParts.map((i) => i.content).join('\n');
        const extensionText = extensionParts
          .map((i) => (i.expand_as ? expand(i.content.trim(), i.expand_as) : i.content.trim()))
          .join('\n');
        const joint = [presetText, extensionText]
          .filter((x) => x)
          .map((x) => x.trim())
          .join('\n');
        if (joint.length > 0) {
          messages.push({
            role,
            content: joint,
            injected: true,
            source_ids: [...presetParts, ...extensionParts].map((i) => i.source_id),
          });
        }
      }
    }
    if (messages.length > 0) {
      newestFirst.splice(depth + inserted, 0, ...messages);
      inserted += messages.length;
    }
  }
  return newestFirst.reverse();
}
