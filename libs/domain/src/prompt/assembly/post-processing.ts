/**
 * SillyTavern's prompt post-processing (chat completion `custom_prompt_post_processing`), as its server
 * applies it after the browser built the prompt (external-formats.md §j): ST `src/prompt-converters.js`
 * `postProcessPrompt` → `mergeMessages(messages, names, {strict, placeholders, single, tools})`. Pure: the
 * input messages are never mutated.
 *
 * What each type does (ST's switch in `postProcessPrompt`):
 * - `none` (ST `''`, its default): nothing.
 * - `merge` (and the deprecated `claude`): names into content, consecutive same-role messages joined with
 *   `\n\n`.
 * - `semi`: merge, then every system message after the first becomes `user`, then merge again.
 * - `strict`: `semi`, plus a user placeholder when the prompt does not start with system+user or user.
 * - `single`: everything becomes one user message, speakers prefixed by name.
 * - `*_tools`: the same, keeping tool calls; Hearth's engine produces no tool messages yet, so they behave
 *   as their plain counterparts.
 */

export type PostProcessingMode =
  'none' | 'merge' | 'merge_tools' | 'semi' | 'semi_tools' | 'strict' | 'strict_tools' | 'single';

export const POST_PROCESSING_MODES: readonly PostProcessingMode[] = [
  'none',
  'merge',
  'merge_tools',
  'semi',
  'semi_tools',
  'strict',
  'strict_tools',
  'single',
];

/**
 * The placeholder user message of strict mode and of an empty prompt: ST reads it from `config.yaml`
 * `promptPlaceholder`, which a fresh install ships as `[Start a new chat]` (the code's fallback,
 * `Let's get started.`, applies only to a config file without the key).
 */
export const ST_PROMPT_PLACEHOLDER = '[Start a new chat]';

export interface PostProcessMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  name?: string;
}

export interface PostProcessNames {
  /** ST request `char_name`. */
  charName: string;
  /** ST request `user_name`. */
  userName: string;
  /** ST request `group_names` (Hearth has no group chats: empty). */
  groupNames?: readonly string[];
}

export interface PostProcessingTrace {
  mode: PostProcessingMode;
  /** Messages joined into the one before them (both merge passes of semi/strict counted). */
  merged_count: number;
  /** Whether a placeholder user message was added (strict, or an empty prompt). */
  placeholder_inserted: boolean;
  /** System messages after the first turned into user messages (semi, strict, single). */
  system_to_user_count: number;
}

export interface PostProcessingResult {
  messages: PostProcessMessage[];
  trace: PostProcessingTrace;
}

interface MergeOptions {
  strict: boolean;
  placeholders: boolean;
  single: boolean;
}

/** The options ST's `postProcessPrompt` passes to `mergeMessages` for each type; null = no processing. */
function optionsFor(mode: PostProcessingMode): MergeOptions | null {
  switch (mode) {
    case 'merge':
    case 'merge_tools':
      return { strict: false, placeholders: false, single: false };
    case 'semi':
    case 'semi_tools':
      return { strict: true, placeholders: false, single: false };
    case 'strict':
    case 'strict_tools':
      return { strict: true, placeholders: true, single: false };
    case 'single':
      return { strict: true, placeholders: false, single: true };
    default:
      return null;
  }
}

/** Reads a stored or requested value: ST's `''` and the deprecated `claude` are accepted; unknown → null. */
export function parsePostProcessingMode(value: unknown): PostProcessingMode | null {
  if (value === '' || value === null || value === undefined) return 'none';
  if (value === 'claude') return 'merge';
  return typeof value === 'string' && (POST_PROCESSING_MODES as readonly string[]).includes(value)
    ? (value as PostProcessingMode)
    : null;
}

/**
 * Applies one post-processing type to the assembled messages (ST `postProcessPrompt`). `placeholder`
 * defaults to ST's shipped `[Start a new chat]`.
 */
export function postProcessPrompt(
  messages: readonly PostProcessMessage[],
  mode: PostProcessingMode,
  names: PostProcessNames,
  placeholder: string = ST_PROMPT_PLACEHOLDER,
): PostProcessingResult {
  const trace: PostProcessingTrace = {
    mode,
    merged_count: 0,
    placeholder_inserted: false,
    system_to_user_count: 0,
  };
  const options = optionsFor(mode);
  if (!options) return { messages: messages.map((m) => ({ ...m })), trace };
  const copies = messages.map((m) => ({ ...m }));
  return { messages: mergeMessages(copies, names, options, placeholder, trace), trace };
}

/** ST `startsWithGroupName`: the text starts with `<member>: `. */
function startsWithGroupName(names: PostProcessNames, text: string): boolean {
  return (names.groupNames ?? []).some((name) => text.startsWith(`${name}: `));
}

/**
 * ST `mergeMessages` on string contents (Hearth sends no image parts). Works on its own copies: `messages`
 * belongs to this call.
 */
function mergeMessages(
  messages: PostProcessMessage[],
  names: PostProcessNames,
  options: MergeOptions,
  placeholder: string,
  trace: PostProcessingTrace,
): PostProcessMessage[] {
  // Names into contents, then the `name` field is dropped.
  for (const message of messages) {
    if (!message.content) message.content = '';
    if (message.role === 'system' && message.name === 'example_assistant') {
      if (
        names.charName &&
        !message.content.startsWith(`${names.charName}: `) &&
        !startsWithGroupName(names, message.content)
      ) {
        message.content = `${names.charName}: ${message.content}`;
      }
    }
    if (message.role === 'system' && message.name === 'example_user') {
      if (names.userName && !message.content.startsWith(`${names.userName}: `)) {
        message.content = `${names.userName}: ${message.content}`;
      }
    }
    if (message.name && message.role !== 'system') {
      if (!message.content.startsWith(`${message.name}: `)) {
        message.content = `${message.name}: ${message.content}`;
      }
    }
    if (options.single) {
      if (message.role === 'assistant') {
        if (
          names.charName &&
          !message.content.startsWith(`${names.charName}: `) &&
          !startsWithGroupName(names, message.content)
        ) {
          message.content = `${names.charName}: ${message.content}`;
        }
      }
      if (message.role === 'user') {
        if (names.userName && !message.content.startsWith(`${names.userName}: `)) {
          message.content = `${names.userName}: ${message.content}`;
        }
      }
      if (message.role === 'system') trace.system_to_user_count++;
      message.role = 'user';
    }
    delete message.name;
  }

  // Consecutive messages of one role are joined with a blank line; an empty message is kept on its own
  // (ST joins only when the later message has content).
  const merged: PostProcessMessage[] = [];
  for (const message of messages) {
    const last = merged[merged.length - 1];
    if (last && last.role === message.role && message.content) {
      last.content += `\n\n${message.content}`;
      trace.merged_count++;
    } else {
      merged.push(message);
    }
  }

  // An empty prompt gets the placeholder (every type, not only strict).
  if (merged.length === 0) {
    merged.unshift({ role: 'user', content: placeholder });
    trace.placeholder_inserted = true;
  }

  if (options.strict) {
    for (let i = 1; i < merged.length; i++) {
      if (merged[i].role === 'system') {
        merged[i].role = 'user';
        trace.system_to_user_count++;
      }
    }
    if (merged.length > 0 && options.placeholders) {
      if (merged[0].role === 'system' && (merged.length === 1 || merged[1].role !== 'user')) {
        merged.splice(1, 0, { role: 'user', content: placeholder });
        trace.placeholder_inserted = true;
      } else if (merged[0].role !== 'system' && merged[0].role !== 'user') {
        merged.unshift({ role: 'user', content: placeholder });
        trace.placeholder_inserted = true;
      }
    }
    return mergeMessages(
      merged,
      names,
      { strict: false, placeholders: options.placeholders, single: false },
      placeholder,
      trace,
    );
  }
  return merged;
}
