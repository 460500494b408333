import { isInjectionDepth } from '../engine/authors-note';
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
 * false)` returns (`extensionPromptText`), and the joint of preset and extension text is trimmed again.
 */
export function insertDepthInjections<T>(
  history: T[],
  injections: DepthInjection[],
  expand: (text: string, label: string) => string = (text) => text,
): Array<HistoryItem<T> | InjectedItem> {
  const newestFirst: Array<HistoryItem<T> | InjectedItem> = history
    .map((item) => ({ item, injected: false as const }))
    .reverse();
  const usable = injections.filter((i) => i.content.length > 0 && isInjectionDepth(i.depth));
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
        const extensionText = extensionPromptText(extensionParts, expand);
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

/**
 * ST `getExtensionPrompt`: the values in key order, each trimmed, joined with `\n`, then one macro pass
 * (`substituteParams`) over the joined text, so `{{pick}}` is seeded by the whole text and a scoped macro
 * may open in one prompt and close in the next. Only the parts marked `expand_as` are ST's extension
 * prompts; a run of them is expanded as one text (labelled with their labels), the others are placed as
 * given (Hearth's client injections, whose keys sort after ST's).
 */
function extensionPromptText(
  parts: DepthInjection[],
  expand: (text: string, label: string) => string,
): string {
  const texts: string[] = [];
  let run: DepthInjection[] = [];
  const flush = () => {
    if (run.length === 0) return;
    const labels = [...new Set(run.map((i) => i.expand_as))].join('+');
    texts.push(expand(run.map((i) => i.content.trim()).join('\n'), labels));
    run = [];
  };
  for (const part of parts) {
    if (part.expand_as) run.push(part);
    else {
      flush();
      texts.push(part.content.trim());
    }
  }
  flush();
  return texts.join('\n');
}
