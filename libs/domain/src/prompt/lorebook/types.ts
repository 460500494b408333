import type { NormalizedWorldbookEntry } from '../../formats/worldbook';
import type { TokenCounter } from '../shared/token-counter';
import type { LorebookBookDefaults, LorebookScanSourceKind, LorebookSourceKind } from './entry';
import type { LorebookPlacement } from './placement';
import type { PreparedLorebook } from './prepare';
import type { ScanSegmentKind } from './scan-buffer';
import type { LorebookSettings } from './settings';
import type { LorebookTimedState } from './timed-effects';

/** ST generation types (§h: equal to spec 2's `prompt_intent`). */
export type LorebookIntent = 'normal' | 'continue' | 'impersonate' | 'swipe' | 'regenerate' | 'quiet';

export interface LorebookBookInput {
  id: string;
  name: string;
  /** §d.1 source; `global` covers session-bound books. */
  source: LorebookSourceKind;
  entries: readonly NormalizedWorldbookEntry[];
  /** Book-level match defaults (spec 3 payload), between the entry's own value and the session settings. */
  defaults?: LorebookBookDefaults | null;
}

export interface LorebookChatMessage {
  /** The message text as it goes into the prompt (after user/AI-output regex scripts). */
  text: string;
  /** Speaker name, scanned as `Name: text` when `includeNames` is on. */
  name?: string | null;
}

export interface LorebookActivationInput {
  /** Books in any order; grouped by source and deduplicated by id (first source wins, §d.1). */
  books: ReadonlyArray<LorebookBookInput | PreparedLorebook>;
  /** The scanned history, oldest first, newest last: hidden messages and the swiped message left out. */
  messages: readonly LorebookChatMessage[];
  /** Chat length for timed effects (§d.9); defaults to `messages.length`. */
  chatLength?: number;
  /** Generation type for `triggers` (default `normal`). */
  intent?: LorebookIntent;
  settings?: Partial<LorebookSettings>;
  /** Context size minus the response length, in tokens (the budget is a percentage of it, §d.5). */
  maxPromptTokens: number;
  /** Timed-effect state from the previous turn (§d.9). */
  timedState?: LorebookTimedState | null;
  /** Dry runs neither read nor write sticky/cooldown (§d.9). */
  dryRun?: boolean;
  /** Probability rolls and group picks draw from `forkRandom(seed, 'lorebook')`. */
  seed: string;
  /** §d.8 extra scan inputs, used for entries whose match* flag is on. */
  scanSources?: Partial<Record<LorebookScanSourceKind, string | null>>;
  /** Extension prompts marked "scan" (e.g. the author's note with "allow WI scan"). */
  extensionPrompts?: readonly string[];
  /** For `characterFilter`: the character's file name (ST avatar name) and tags; absent = no character. */
  character?: { filename?: string | null; tags?: readonly string[] } | null;
  /** Entries forced on from outside (ST slash command / extension), by book id and uid. */
  forcedActivations?: ReadonlyArray<{ bookId: string; uid: number }>;
  /** Macro substitution for keys and contents (identity by default). */
  substitute?: (text: string) => string;
  tokenCounter?: TokenCounter;
  debug?: { matches?: boolean };
}

export type LorebookActivationMode = 'key' | 'constant' | 'sticky' | 'decorator' | 'forced';
export type LorebookPassKind = 'initial' | 'recursion' | 'min_activations';
export type LorebookRole = 'system' | 'user' | 'assistant';

export interface ActivatedLorebookEntry {
  bookId: string;
  bookName: string;
  source: LorebookSourceKind;
  uid: number;
  comment: string;
  /** Decorators stripped, macros substituted. */
  content: string;
  order: number;
  position: number;
  depth: number;
  role: LorebookRole;
  outletName: string;
  ignoreBudget: boolean;
  mode: LorebookActivationMode;
  pass: LorebookPassKind;
  /** 0 for the first pass and min-activation passes, n for the n-th recursion pass. */
  recursionLevel: number;
}

/** Spec 2 `worldbook_matches[].activation.first_match`. */
export interface LorebookFirstMatch {
  source_kind: ScanSegmentKind;
  message_index_from_latest: number | null;
  matched_key: string;
  matched_key_scope: 'primary' | 'secondary';
  matched_key_type: 'plain' | 'regex';
  /** Offsets in the scanned text of that source (`Name: text` for messages when names are included). */
  char_start: number;
  char_end: number;
  excerpt: string;
}

/** Spec 2 `worldbook_matches[]` item. */
export interface LorebookMatch {
  uid: number;
  comment: string;
  content_preview: string;
  order: number;
  source: { kind: LorebookSourceKind; worldbook_id: string; worldbook_name: string };
  insertion: {
    position: number;
    depth: number | null;
    role: LorebookRole | null;
    outlet_name: string | null;
  };
  activation: {
    mode: LorebookActivationMode;
    pass: LorebookPassKind;
    recursion_level: number;
    first_match: LorebookFirstMatch | null;
  };
}

export type LorebookWarningCode =
  | 'invalid_lorebook_setting'
  | 'invalid_key_regex'
  | 'unsupported_key_regex'
  | 'key_regex_aborted'
  | 'lorebook_budget_estimated'
  | 'lorebook_scan_budget_exhausted'
  | 'duplicate_book_skipped'
  | 'invalid_timed_state'
  | 'outlet_without_name'
  | 'unknown_position';

export interface LorebookWarning {
  code: LorebookWarningCode;
  message: string;
  bookId?: string;
  uid?: number;
}

export interface LorebookActivation {
  /** Every activated entry in activation order (passes in turn, sticky first within a pass). */
  activated: ActivatedLorebookEntry[];
  /** Entries grouped by position in the order ST inserts them (§d.7). */
  placement: LorebookPlacement;
  /** Spec 2 `worldbook_activated_entry_uids`, per book id (activation order). */
  activatedEntryUids: Record<string, number[]>;
  /** Spec 2 `worldbook_hits`: one item per activated entry, activation order. */
  hits: Array<{
    worldbook_id: string;
    worldbook_name: string;
    uid: number;
    comment: string;
    order: number;
    position: number;
    mode: LorebookActivationMode;
    recursion_level: number;
  }>;
  /** Spec 2 `worldbook_matches` (only with `debug.matches`), in activation order. */
  matches: LorebookMatch[] | null;
  /** Spec 2 `trigger_filtered_entry_ids`: entries skipped because `triggers` excluded the intent. */
  triggerFilteredEntries: Array<{ bookId: string; uid: number }>;
  timedState: LorebookTimedState;
  budget: { limit: number; overflowed: boolean };
  passes: number;
  settings: LorebookSettings;
  warnings: LorebookWarning[];
}
