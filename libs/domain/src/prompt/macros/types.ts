import type { MutationPreview, StagedMutation, VariableViews } from './variables';

/** ST 1.18 ships two macro engines (§g, §j): the classic regex passes and the newer parser (`v2`, default). */
export type MacroEngineKind = 'classic' | 'v2';

/** A chat message as the chat macros read it (ST chat file fields, §a). */
export interface MacroChatMessage {
  /** The active text (`mes`). */
  mes: string;
  is_user?: boolean;
  /** Hidden message (`is_system: true`); narrator messages carry `is_system: ""` and are not hidden. */
  is_system?: boolean | string;
  name?: string;
  swipes?: string[] | null;
  swipe_id?: number | null;
  /** Unix ms or anything `Date.parse` reads (ST `send_date`). */
  send_date?: number | string | null;
}

export interface MacroCharacter {
  name?: string;
  description?: string;
  personality?: string;
  scenario?: string;
  /** Card `system_prompt` (`{{charPrompt}}`). */
  systemPrompt?: string;
  /** Card `post_history_instructions` (`{{charInstruction}}`, legacy `{{charJailbreak}}`). */
  postHistoryInstructions?: string;
  /** Card `mes_example` (`{{mesExamplesRaw}}`). */
  mesExamples?: string;
  /** Already formatted examples; when absent `{{mesExamples}}` is formatted as ST does for chat completion. */
  mesExamplesFormatted?: string;
  version?: string;
  /** `extensions.depth_prompt.prompt` (`{{charDepthPrompt}}`). */
  depthPrompt?: string;
  creatorNotes?: string;
  firstMessage?: string;
  alternateGreetings?: string[];
  /**
   * True when the fields above were already macro-expanded by the caller. Otherwise the engine expands
   * each one on first use, once per assembly, as ST's getCharacterCardFields does (baseChatReplace).
   */
  fieldsExpanded?: boolean;
}

export interface MacroGroup {
  /** Member names, in group order (muted included). */
  members: string[];
  /** Names of muted members (`disabled_members`). */
  muted?: string[];
}

/**
 * Everything a macro can read. The engine never reads the clock or any global: `now`, `timezone` and
 * `seed` make a turn reproducible.
 */
export interface MacroContext {
  /** Default `v2`, as ST 1.18 ships it (§j "Shipped settings"). */
  engine?: MacroEngineKind;
  /** Persona name (`{{user}}`). */
  user?: string;
  /** Character name (`{{char}}`); the current speaker in a group. */
  char?: string;
  /** Persona description (`{{persona}}`). */
  persona?: string;
  character?: MacroCharacter | null;
  group?: MacroGroup | null;
  /** Model id (`{{model}}`). */
  model?: string;
  /** Current input text (`{{input}}`). */
  input?: string;
  /** Chat messages in order (index = ST message id). */
  chat?: MacroChatMessage[];
  /** `{{firstIncludedMessageId}}` (ST `chat_metadata.lastInContextMessageId`). */
  firstIncludedMessageId?: number | null;
  /** `{{firstDisplayedMessageId}}`. */
  firstDisplayedMessageId?: number | null;
  /** `{{maxPrompt}}`, `{{maxContext}}`, `{{maxResponse}}`. */
  limits?: { maxPrompt?: number; maxContext?: number; maxResponse?: number };
  /** The instant macros see, Unix ms. */
  now: number;
  /** IANA timezone for local time macros; default `UTC`. */
  timezone?: string;
  /** Turn seed: `{{random}}` and `{{roll}}` draw from `forkRandom(seed, 'macros')`. */
  seed: string;
  /** `chat_metadata.chat_id_hash` (number) or the chat id it is computed from (string), for `{{pick}}`. */
  chatIdHash?: number | null;
  chatId?: string | null;
  /** `chat_metadata.pick_reroll_seed`. */
  pickRerollSeed?: string | number | null;
  /** Local (branch-centred) and global variable views. */
  variables?: VariableViews;
  /** World-info outlet texts by name (`{{outlet::name}}`). */
  outlets?: Record<string, string>;
  /** `{{lastGenerationType}}` (ST generation type: normal, continue, impersonate, swipe, regenerate, quiet). */
  generationType?: string;
  /** Extra macros by name (ST `dynamicMacros` / `additionalMacro`): plain string values. */
  dynamicMacros?: Record<string, string>;
}

export type MacroWarningCode =
  | 'macro_unknown'
  | 'macro_invalid_arguments'
  | 'macro_syntax'
  | 'macro_invalid_roll'
  | 'macro_invalid_operand'
  | 'macro_limit'
  | 'macro_nesting_limit'
  | 'macro_invalid_timezone'
  | 'macro_internal_error';

export interface MacroWarning {
  code: MacroWarningCode;
  message: string;
  /** The macro concerned, when there is one (lower case). */
  macro?: string;
  /** Label of the text being expanded (the caller's `source`). */
  source?: string;
}

export interface MacroTrace {
  /** The caller's label for the text (a prompt identifier, a lorebook entry, …). */
  source: string;
  engine: MacroEngineKind;
  input_length: number;
  output_length: number;
  used_names: string[];
  mutation_count: number;
}

/** Everything `runtime_trace.macro` reports; plain data, JSON-serialisable. */
export interface MacroDiagnostics {
  warnings: MacroWarning[];
  used_names: string[];
  staged_mutations: StagedMutation[];
  mutation_preview: MutationPreview;
  traces: MacroTrace[];
}

export interface MacroResult extends MacroDiagnostics {
  text: string;
  engine: MacroEngineKind;
}

export interface ExpandOptions {
  /** Label for traces and warnings. */
  source?: string;
  /** Override the session's engine for this text. */
  engine?: MacroEngineKind;
  /** `{{original}}`: the text a prompt override replaces (one-shot: later occurrences give ''). */
  original?: string;
  /** Extra macros for this text only. */
  dynamicMacros?: Record<string, string>;
  /**
   * ST `postProcessFn` (e.g. `sanitizeRegexMacro` for a regex script's `findRegex` with `substituteRegex`
   * 2): classic, each replacement's value; v2, every value a known macro resolves to, nested ones
   * included (not unknown macros' raw text, not variable shorthands), as ST's `#resolveMacro` does.
   */
  escapeValue?: (value: string) => string;
}
