import type { NormalizedWorldbookEntry } from '../../formats/worldbook';
import type { ChatCompletionTrace, GenerationType } from '../assembly/chat-completion';
import type { PostProcessingMode, PostProcessingTrace } from '../assembly/post-processing';
import type { InjectionItem, InjectionTrace, PromptMode } from '../injections/injections';
import type { LorebookSettings, LorebookSourceKind, LorebookMatch, LorebookTimedState } from '../lorebook';
import type { LorebookBookDefaults } from '../lorebook/entry';
import type { MacroDiagnostics, MacroEngineKind, VariableViews } from '../macros';
import type { ExcludedSource, PolicyLayer, PolicyWarning, PromptPolicy, StructureTrace } from '../policy';
import type { RegexScriptScope } from '../regex';
import type { TokenEncoding } from '../shared/token-counter';
import type { AuthorsNote, PersonaPosition, PromptRoleName } from './authors-note';
import type { AuthorsNoteTrace, PersonaTrace } from './authors-note-prompt';

/**
 * Everything one turn knows, as plain data (issue 4: "a function that takes everything a turn knows …
 * and returns the messages to send together with the explanation of how they were made"). The caller
 * (dry-run, respond) loads it from storage; the engine never reads anything else.
 */
export interface PromptEngineInput {
  /** Makes the turn reproducible: macros' random/pick/roll and lorebook probability draw from it. */
  seed: string;
  /** The instant the turn happens (ms); macros never read the clock. */
  now: number;
  timezone?: string;
  intent?: GenerationType;
  /** `compat_strict` (default), `compat_plus`, `native`: which injection placements are available. */
  prompt_mode?: PromptMode;
  macro_engine?: MacroEngineKind;
  /**
   * SillyTavern's `custom_prompt_post_processing` (default `none`, ST's default for chat completion),
   * applied after squash and before the policy's structure step.
   */
  post_processing?: PostProcessingMode;
  session_id?: string | null;
  /** The persona (user card). */
  user: {
    name: string;
    description?: string | null;
    /** Older form of `position`: false means `none`. `position` wins when both are given. */
    in_prompt?: boolean;
    /** Where the description goes (ST `persona_description_position`; default `in_prompt`). */
    position?: PersonaPosition;
    /** With `at_depth`: the in-chat depth (default 2) and role (default system). */
    depth?: number;
    role?: PromptRoleName;
  };
  /** The chat's author's note (ST `chat_metadata.note_*`); absent or null = ST's defaults, an empty note. */
  authors_note?: AuthorsNote | null;
  character: {
    id?: string | null;
    version_id?: string | null;
    /** The card's `data` (name, description, personality, scenario, mes_example, system_prompt, …). */
    data: Record<string, unknown>;
  } | null;
  preset: { id?: string | null; version?: number | null; updated_at?: number | null; data: unknown } | null;
  /** Lorebooks in play: the character book, session-bound books, persona and chat books. */
  lorebooks: Array<{
    id: string;
    name: string;
    source: LorebookSourceKind;
    version?: number | null;
    updated_at?: number | null;
    entries: readonly NormalizedWorldbookEntry[];
    /** Book-level match defaults (spec 3 payload `scanDepth`, `caseSensitive`, `matchWholeWords`). */
    defaults?: LorebookBookDefaults | null;
  }>;
  lorebook_settings?: Partial<LorebookSettings>;
  regex: {
    profile_id?: string | null;
    version?: number | null;
    updated_at?: number | null;
    scripts: Array<{ script: Record<string, unknown>; scope?: RegexScriptScope }>;
  } | null;
  /** The branch history, oldest first, without the new user input. */
  history: Array<{
    floor_no: number;
    role: 'user' | 'assistant' | 'system';
    name: string;
    content: string;
    token_count?: number | null;
    is_hidden?: boolean;
    is_narrator?: boolean;
    message_id?: string;
  }>;
  /** The user's new message (null for continue, regenerate and swipe). */
  user_input: string | null;
  /** The floor number the new user input will get (for injections and the transcript). */
  next_floor_no?: number;
  variables?: VariableViews;
  /** Lorebook timed-effect state the turn starts from (stored per floor by the caller). */
  timed_state?: LorebookTimedState | null;
  memory_summary?: string | null;
  /** Policy layers other than `system_default` (asset, session, branch, request, provider). */
  policy_layers?: PolicyLayer[];
  injections?: InjectionItem[];
  provider: {
    /** `openai`, `anthropic`, `google`, … or null when unknown (dry-run without a model). */
    kind: string | null;
    model_id: string | null;
  };
  generation_params?: { max_output_tokens?: number | null; max_context_tokens?: number | null };
  debug?: { include_worldbook_matches?: boolean };
  /** Dry runs read timed effects but do not advance them (ST `checkWorldInfo` dry run). */
  dry_run?: boolean;
  token_encoding?: TokenEncoding;
}

export interface PromptSnapshot {
  preset_id: string | null;
  preset_updated_at: number | null;
  preset_version: number | null;
  worldbook_id: string | null;
  worldbook_updated_at: number | null;
  worldbook_version: number | null;
  worldbook_ids: string[];
  regex_profile_id: string | null;
  regex_profile_updated_at: number | null;
  regex_profile_version: number | null;
  worldbook_activated_entry_uids: number[];
  worldbook_activated_entries: Record<string, number[]>;
  regex_pre_rule_names: string[];
  regex_post_rule_names: string[];
  prompt_mode: PromptMode;
  prompt_digest: string;
  token_estimate: number;
  /** The messages as sent, so a committed floor can be explained without recomputing. */
  messages: Array<{ role: string; content: string; name?: string }>;
}

export interface PromptAssemblyReport {
  mode: PromptMode;
  prompt_intent: GenerationType;
  assistant_prefill_applied: boolean;
  assistant_prefill_strategy: string | null;
  preset_used: boolean;
  selected_prompt_order_character_id: number | string | null;
  ignored_prompt_order_character_ids: Array<number | string>;
  continue_nudge_applied: boolean;
  continue_nudge_text: string | null;
  names_behavior_applied: number;
  trigger_filtered_entry_ids: string[];
  in_chat_inserted_entry_ids: string[];
  worldbook_hits: Array<Record<string, unknown>>;
  regex_pre_rules: Array<{ name: string; scope: string | null; matches: number }>;
  regex_post_rules: Array<{ name: string; scope: string | null }>;
  memory_summary_injected: boolean;
  reserved_variable_collisions: string[];
  unsupported_preset_fields: string[];
  ignored_preset_fields: string[];
  unresolved_preset_markers: string[];
  preset_warnings: Array<{ code: string; message: string; field?: string }>;
  preprocessed_user_message: string | null;
  worldbook_matches: LorebookMatch[] | null;
}

export interface TrimReason {
  kind: 'history' | 'examples' | 'worldbook' | 'injection' | 'mandatory_overflow';
  reason: string;
  count: number;
}

export interface PromptRuntimeTrace {
  macro: MacroDiagnostics;
  budgets: {
    max_input_tokens: number;
    reserved_completion_tokens: number;
    available: number;
    used: number;
    source: string;
    worldbook_budget: number;
    trim_reasons: TrimReason[];
  };
  source_selection: {
    excluded_sources: Array<ExcludedSource | { kind: string; reason: string; count: number }>;
  };
  history_normalization: { total: number; included: number; hidden: number; dropped_oldest: number };
  structure: StructureTrace;
  /** ST prompt post-processing (runs before `structure`). */
  post_processing: PostProcessingTrace;
  delivery: { assistant_prefill_strategy: string | null; require_last_user: boolean };
  injection: InjectionTrace;
  worldbook: {
    passes: number;
    warnings: Array<{ code: string; message: string }>;
    budget: { limit: number; overflowed: boolean };
    outlets_as_sections: string[];
  };
  regex: { warnings: Array<{ code: string; message: string; script_name: string }> };
  policy: { resolved: PromptPolicy; sources: Record<string, string>; warnings: PolicyWarning[] };
  assembly: ChatCompletionTrace;
  tool_transport: { mode: 'none' };
  authors_note: AuthorsNoteTrace;
  persona: PersonaTrace;
}

export interface PromptEngineResult {
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string; name?: string }>;
  token_estimate: number;
  available_for_reply: number;
  prompt_snapshot: PromptSnapshot;
  assembly: PromptAssemblyReport;
  runtime_trace: PromptRuntimeTrace;
  /**
   * The user's input after its regex scripts and one macro pass (what is stored as the user message; ST
   * `sendMessageAsUser` stores `substituteParams(regexed text)`).
   */
  user_input_processed: string | null;
  /** Timed-effect state to store with the floor (unchanged on dry runs). */
  timed_state_after: LorebookTimedState;
  warnings: Array<{ code: string; message: string }>;
}
